// The agentbus web console. Everything agents wrote is untrusted: it reaches
// the page only through textContent (el() below), never as HTML.
//
// Rows are kept, not rebuilt: each message and each memory has one element,
// added, changed, moved or removed in place as events arrive, so what a person
// is using (an editor with unsaved text, an open revision list, the scroll
// position, focus) survives every update. The live page shows what a reload
// shows: rows the bus tombstoned (a memory's superseded or deleted revision)
// are removed, and a reply sits under its parent exactly when the parent is shown.
const token = decodeURIComponent(document.querySelector('meta[name="agentbus-token"]').content);
const $ = (id) => document.getElementById(id);
const PAGE = 200;

/** An element with attributes and children; strings become text nodes. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'class') node.className = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  return node;
}

async function api(path, body) {
  const init = { headers: { 'X-Agentbus-Token': token } };
  if (body !== undefined) Object.assign(init, { method: 'POST', body: JSON.stringify(body), headers: { ...init.headers, 'Content-Type': 'application/json' } });
  const res = await fetch(path, init);
  const value = await res.json();
  if (!res.ok) throw new Error(value.error ? `${value.error.code}: ${value.error.message}` : `HTTP ${res.status}`);
  return value;
}

// Direct messages live in the bus's reserved channel "@direct"; view.channel is DIRECT for the
// direct messages view, view.between one conversation of it (two names), or null for all of them.
const DIRECT = '@direct';
const TO = 'to:';
const view = { channel: null, between: null, replyTo: null, state: null, tab: 'messages', live: false, generation: 0, oldest: null, hasOlder: false, memoriesLoaded: false };
const when = (iso) => new Date(iso).toLocaleString();
const seqOf = (node) => Number(node.dataset.seq);

/** Moves or inserts `node` before `before` in `parent`; a move keeps focus and selection (moveBefore) where the browser has it. */
function put(parent, node, before) {
  if (before === node || (node.parentNode === parent && node.nextSibling === before)) return;
  if (node.isConnected && parent.isConnected && typeof parent.moveBefore === 'function') {
    try {
      parent.moveBefore(node, before);
      return;
    } catch {
      // Not movable here (another document, say): an ordinary insert.
    }
  }
  parent.insertBefore(node, before);
}

/** Puts `node` among `list`'s children, which are in seq order (ascending, or descending with `desc`). */
function putSorted(list, node, seq, desc = false) {
  const kids = list.children;
  const after = (k) => (desc ? seqOf(k) > seq : seqOf(k) < seq);
  if (kids.length === 0 || after(kids[kids.length - 1])) return put(list, node, null);
  let lo = 0;
  let hi = kids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (after(kids[mid])) lo = mid + 1;
    else hi = mid;
  }
  put(list, node, kids[lo] === node ? node.nextSibling : kids[lo]);
}

/** The read state of a direct message per addressee: unread, delivered (received, not acknowledged) or acknowledged. */
function readStatesOf(read) {
  return el('span', { class: 'read-states' }, ...read.map((r) => el('span', { class: `read-state ${r.state}`, 'data-name': r.name, 'data-state': r.state, title: r.acknowledged_at ? `acknowledged ${when(r.acknowledged_at)}` : r.delivered_at ? `delivered ${when(r.delivered_at)}` : 'not received yet' }, `${r.name}: ${r.state}`)));
}

function metaOf(m) {
  return el('div', { class: 'meta' },
    m.to ? el('span', { class: 'channel-name direct' }, `direct → ${m.to.join(', ')}`) : el('span', { class: 'channel-name' }, `#${m.channel}`),
    el('span', { class: 'seq' }, `[${m.seq}]`),
    el('span', { class: 'sender' }, m.sender),
    el('span', { class: 'context' }, m.context ?? ''),
    el('time', { datetime: m.created_at }, when(m.created_at)),
    m.type ? el('span', { class: 'type' }, m.type) : null,
    m.reply_to !== null ? el('span', {}, `↳ re ${m.reply_to}`) : null,
    m.memory_id != null ? el('span', {}, `memory ${m.memory_id} rev ${m.revision}`) : null,
    m.read ? readStatesOf(m.read) : null);
}

function messageItem(m, { actions = [] } = {}) {
  return el('li', { class: 'message', 'data-seq': m.seq }, metaOf(m), el('div', { class: 'content' }, m.content), actions.length ? el('div', { class: 'actions' }, actions) : null);
}

// ---- Messages ------------------------------------------------------------

/** seq -> the row shown for it. */
const rows = new Map();
/** A parent's seq -> seqs of its replies shown at the top level because it is not shown. */
const orphans = new Map();

const inConversation = (m, [a, b]) => (m.sender === a && m.to.includes(b)) || (m.sender === b && m.to.includes(a));
const shows = (m) => view.channel === null || (m.channel === view.channel && (view.between === null || inConversation(m, view.between)));
const repliesOf = (li) => li.querySelector(':scope > ol.replies');
const atBottom = () => rows.size === 0 || window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 40;

function orphan(parentSeq, seq) {
  (orphans.get(parentSeq) ?? orphans.set(parentSeq, new Set()).get(parentSeq)).add(seq);
}

/** Shows `m` at its place (under its parent when that is shown); a row already shown is left as it is (messages do not change). */
function showMessage(m) {
  if (!shows(m) || rows.has(m.seq)) return;
  const li = messageItem(m, { actions: [el('button', { type: 'button', class: 'reply-button', onclick: () => startReply(m) }, 'Reply')] });
  li.append(el('ol', { class: 'replies' }));
  if (m.reply_to !== null) li.dataset.replyTo = m.reply_to;
  rows.set(m.seq, li);
  const parent = m.reply_to === null ? undefined : rows.get(m.reply_to);
  if (parent !== undefined) {
    li.classList.add('reply');
    putSorted(repliesOf(parent), li, m.seq);
  } else {
    putSorted($('messages'), li, m.seq);
    if (m.reply_to !== null) orphan(m.reply_to, m.seq);
  }
  const waiting = orphans.get(m.seq);
  if (waiting === undefined) return;
  orphans.delete(m.seq);
  for (const seq of waiting) {
    const reply = rows.get(seq);
    if (reply === undefined) continue;
    reply.classList.add('reply');
    putSorted(repliesOf(li), reply, seq);
  }
}

/** Removes the row of `seq`; its replies move to the top level, where a reload shows them. */
function removeMessage(seq) {
  const li = rows.get(seq);
  if (li === undefined) return;
  rows.delete(seq);
  if (li.dataset.replyTo !== undefined) orphans.get(Number(li.dataset.replyTo))?.delete(seq);
  const replies = [...repliesOf(li).children];
  li.remove();
  for (const reply of replies) {
    reply.classList.remove('reply');
    putSorted($('messages'), reply, seqOf(reply));
    orphan(seq, seqOf(reply));
  }
}

/** Runs `change` and keeps the view where the person left it: at the bottom when it was there, else on the same row. */
function keepingScroll(change) {
  const bottom = atBottom();
  const anchor = bottom ? null : [...$('messages').children].find((li) => li.getBoundingClientRect().bottom > 0);
  const top = anchor?.getBoundingClientRect().top;
  change();
  if (bottom) window.scrollTo(0, document.documentElement.scrollHeight);
  else if (anchor?.isConnected) {
    const moved = anchor.getBoundingClientRect().top - top;
    if (Math.abs(moved) > 0.5) window.scrollBy(0, moved);
  }
}

function showOlderState() {
  $('older').hidden = !view.hasOlder;
  $('history-start').hidden = view.hasOlder || rows.size === 0;
}

async function loadPage(before) {
  const params = new URLSearchParams({ limit: String(PAGE) });
  if (view.channel === DIRECT) {
    params.set('direct', 'true');
    if (view.between !== null) params.set('between', view.between.join(','));
  } else if (view.channel !== null) params.set('channel', view.channel);
  if (before !== null) params.set('before', String(before));
  const generation = view.generation;
  const page = await api(`/api/messages?${params}`);
  if (generation !== view.generation) return;
  keepingScroll(() => {
    for (const m of page.messages) showMessage(m);
    if (page.messages.length > 0) view.oldest = Math.min(view.oldest ?? Infinity, page.messages[0].seq);
    view.hasOlder = page.has_more;
    showOlderState();
  });
}

/** Shows the newest page of the chosen channel (or all), from nothing: what a reload shows. */
function resetMessages() {
  view.generation++;
  rows.clear();
  orphans.clear();
  view.oldest = null;
  view.hasOlder = false;
  $('messages').replaceChildren();
  showOlderState();
  return loadPage(null);
}

function startReply(m) {
  view.replyTo = m.seq;
  // A direct message is answered directly, to whoever wrote it (or, for the person's own, to its first addressee).
  const person = view.state?.person;
  $('post-channel').value = m.to ? `${TO}${m.sender === person ? m.to[0] : m.sender}` : m.channel;
  $('reply-text').textContent = `Replying to [${m.seq}] ${m.sender}`;
  $('reply-note').hidden = false;
  $('post-text').focus();
}
function cancelReply() {
  view.replyTo = null;
  $('reply-note').hidden = true;
}

function selectChannel(name, between = null) {
  view.channel = name;
  view.between = between;
  $('channel-title').textContent = name === null ? 'All channels' : name === DIRECT ? (between ? `Direct: ${between.join(' ↔ ')}` : 'Direct messages') : `#${name}`;
  const person = view.state?.person;
  if (name === DIRECT && between !== null) $('post-channel').value = `${TO}${between[0] === person ? between[1] : between[0]}`;
  else if (name !== null && name !== DIRECT) $('post-channel').value = name;
  if (view.state) renderState(view.state);
  void resetMessages().catch(showError);
}

// ---- State (header and side bar) -------------------------------------------

function reservationItem(r) {
  return el('li', {}, `${r.pattern} `, el('span', { class: 'muted' }, `${r.display_name} · ${r.exclusive ? 'exclusive' : 'shared'} · until ${when(r.expires_at)}${r.taken_from ? ` · taken over from ${r.taken_from}` : ''}${r.reason ? ` · ${r.reason}` : ''}`));
}

function renderState(state) {
  view.state = state;
  $('person').textContent = `posting as ${state.person}`;
  const usage = state.usage;
  $('capacity').textContent = usage ? `capacity ${usage.percent}% of ${(usage.budget_bytes / 1048576).toFixed(0)} MiB` : '';
  $('capacity').className = usage && usage.used_bytes > usage.target_bytes ? 'warn' : '';
  $('notices').replaceChildren(...state.notices.map((n) => el('li', { class: 'notice' }, `${n.kind}: ${n.message}`)));
  const channelItem = (name, label, ...rest) => el('li', { class: `channel${view.channel === name && view.between === null ? ' active' : ''}`, onclick: () => selectChannel(name) }, label, ...rest);
  const conversationItem = (c) => el('li', {
    class: `conversation${view.between?.join('\n') === c.between.join('\n') ? ' active' : ''}`,
    'data-between': c.between.join(','),
    onclick: () => selectChannel(DIRECT, c.between),
  }, `${c.between[0]} ↔ ${c.between[1]} `, el('span', { class: 'muted' }, `${c.messages} msgs`));
  $('channels').replaceChildren(
    channelItem(null, 'All channels'),
    ...state.channels.map((c) => channelItem(c.name, `#${c.name} `, el('span', { class: 'muted' }, `${c.kind} · ${c.messages} msgs · ${c.subscribers} subs`))),
    channelItem(DIRECT, 'Direct messages'),
    ...state.conversations.map(conversationItem),
  );
  $('sessions').replaceChildren(...(state.sessions.length ? state.sessions.map((s) => el('li', {}, s.display_name, ' ', el('span', { class: 'muted' }, `${s.context} · seen ${when(s.heartbeat_at)}`))) : [el('li', { class: 'muted' }, 'none')]));
  $('reservations').replaceChildren(...(state.reservations.length ? state.reservations.map(reservationItem) : [el('li', { class: 'muted' }, 'none')]));
  // The picker (channels, then the agents a direct message can go to) is rebuilt only when they change: an open picker stays open.
  const select = $('post-channel');
  const names = state.channels.map((c) => c.name);
  const agents = [...new Set([...state.sessions.map((s) => s.display_name), ...state.conversations.flatMap((c) => c.between)])].filter((n) => n !== state.person).sort();
  const values = [...names, ...agents.map((a) => `${TO}${a}`)];
  if ([...select.querySelectorAll('option')].map((o) => o.value).join('\n') !== values.join('\n')) {
    const chosen = select.value || view.channel;
    select.replaceChildren(
      el('optgroup', { label: 'Channel' }, ...names.map((name) => el('option', { value: name }, `#${name}`))),
      agents.length ? el('optgroup', { label: 'Direct message to' }, ...agents.map((a) => el('option', { value: `${TO}${a}` }, a))) : null,
    );
    if (chosen) select.value = chosen;
  }
  $('search-mode').querySelector('option[value="semantic"]').disabled = !state.embeddings.enabled;
  $('search-mode').querySelector('option[value="both"]').disabled = !state.embeddings.enabled;
}

// ---- Memories --------------------------------------------------------------

/** memory_id -> { li, m (the revision shown), editing, history (revisions open) }. */
const memories = new Map();

function memoryItem(m) {
  const li = el('li', { class: 'memory', 'data-memory-id': m.memory_id, 'data-seq': m.seq });
  const entry = { li, m, editing: null, historyOpen: false };
  const history = el('ol', { class: 'revisions' });
  const actions = el('div', { class: 'actions' },
    el('button', { type: 'button', class: 'edit-button', onclick: () => startEdit(entry) }, 'Edit'),
    el('button', { type: 'button', class: 'delete-button', onclick: () => void removeMemory(entry) }, 'Delete'),
    el('button', { type: 'button', class: 'history-button', onclick: () => void toggleHistory(entry).catch(showError) }, 'Revisions'));
  li.append(metaOf(m), el('div', { class: 'content' }, m.content), actions, history);
  memories.set(m.memory_id, entry);
  return entry;
}

/**
 * Shows revision `m` in its memory's row (made when new), which moves to where a reload lists it
 * (newest revision first). A revision older than the one shown changes nothing: a listing and the
 * events replayed after it may bring an earlier revision after a later one.
 */
function showMemory(m) {
  const shown = memories.get(m.memory_id);
  if (shown && m.seq < shown.m.seq) return;
  const entry = shown ?? memoryItem(m);
  if (entry.m.seq !== m.seq) {
    entry.m = m;
    entry.li.dataset.seq = m.seq;
    entry.li.classList.remove('deleted');
    entry.li.querySelector(':scope > .meta').replaceWith(metaOf(m));
    entry.li.querySelector(':scope > .content').textContent = m.content;
    if (entry.editing) entry.editing.note.textContent = `changed to revision ${m.revision} by ${m.sender} since you opened the editor; Save replaces it with your text`;
  }
  putSorted($('memories'), entry.li, m.seq, true);
  if (entry.historyOpen) void showHistory(entry).catch(showError);
}

/** The memory's live revision is gone (deleted): its row goes, unless the person is editing it. */
function memoryDeleted(entry) {
  if (entry.editing) {
    entry.li.classList.add('deleted');
    entry.editing.note.textContent = `deleted by an agent while you edit; Save will fail, copy your text if you need it`;
    return;
  }
  dropMemory(entry);
}

function dropMemory(entry) {
  memories.delete(entry.m.memory_id);
  entry.li.remove();
}

function startEdit(entry) {
  if (entry.editing) return entry.editing.text.focus();
  const text = el('textarea', { class: 'edit-text', rows: 4 });
  text.value = entry.m.content;
  const note = el('span', { class: 'edit-note' });
  const status = el('span', { class: 'error' });
  const close = () => {
    box.remove();
    entry.editing = null;
    if (entry.li.classList.contains('deleted')) dropMemory(entry);
  };
  const save = async () => {
    try {
      await api('/api/edit-memory', { memory_id: entry.m.memory_id, content: text.value });
      close();
    } catch (error) {
      status.textContent = error.message;
    }
  };
  const box = el('div', { class: 'editor' }, text,
    el('button', { type: 'button', class: 'save-button', onclick: () => void save() }, 'Save'),
    el('button', { type: 'button', class: 'cancel-button', onclick: close }, 'Cancel'), note, status);
  entry.editing = { text, note };
  entry.li.querySelector(':scope > .actions').after(box);
  text.focus();
}

async function removeMemory(entry) {
  if (!confirm(`Delete memory ${entry.m.memory_id}? Agents' get_memory will report it deleted.`)) return;
  try {
    await api('/api/delete-memory', { memory_id: entry.m.memory_id });
  } catch (error) {
    showError(error);
  }
}

async function showHistory(entry) {
  const { revisions } = await api(`/api/memory-history?id=${entry.m.memory_id}`);
  entry.li.querySelector(':scope > .revisions').replaceChildren(...revisions.map((r) => {
    const item = messageItem(r);
    item.className = `revision${r.live ? '' : ' dead'}`;
    item.querySelector('.meta').append(el('span', {}, r.live ? 'live' : 'replaced or deleted'));
    return item;
  }));
}

async function toggleHistory(entry) {
  entry.historyOpen = !entry.historyOpen;
  if (entry.historyOpen) await showHistory(entry);
  else entry.li.querySelector(':scope > .revisions').replaceChildren();
}

/**
 * The memory events (revisions, tombstones) that arrived while each listing was on its way, in
 * arrival order: the listing is a snapshot from some moment during the request, so events from
 * before that moment are already in it and later ones are not. Replaying all of them after the
 * listing converges on the newest state (showMemory ignores older revisions; a tombstone matches
 * only the revision shown), where dropping them lost memories created meanwhile.
 */
const memoryLoads = new Set();

/** Hands a memory event to every listing in flight (replayed after it), and tells whether one is. */
function bufferedForLoads(event) {
  for (const events of memoryLoads) events.push(event);
  return memoryLoads.size > 0;
}

/** Brings the memories list to what the server lists now, in place (rows being edited stay). */
async function loadMemories() {
  const arrived = [];
  memoryLoads.add(arrived);
  try {
    const { memories: listed } = await api(`/api/memories?limit=${PAGE}`);
    const ids = new Set(listed.map((m) => m.memory_id));
    for (const entry of [...memories.values()]) if (!ids.has(entry.m.memory_id)) memoryDeleted(entry);
    for (const m of listed) showMemory(m);
    view.memoriesLoaded = true;
    for (const event of arrived) applyMemoryEvent(event);
    trimMemories();
  } finally {
    memoryLoads.delete(arrived);
  }
}

/** One memory event: new messages (their memory revisions) or tombstoned seqs. */
function applyMemoryEvent(event) {
  if (event.messages) {
    for (const m of event.messages) if (m.memory_id != null) showMemory(m);
    return;
  }
  const gone = new Set(event.tombstoned);
  for (const entry of [...memories.values()]) {
    if (gone.has(entry.m.seq)) memoryDeleted(entry);
    else if (entry.historyOpen) void showHistory(entry).catch(showError);
  }
}

/** A page's worth at most, as a reload lists (rows being edited stay). */
function trimMemories() {
  const list = $('memories');
  for (let i = list.children.length - 1; i >= 0 && memories.size > PAGE; i--) {
    const entry = memories.get(Number(list.children[i].dataset.memoryId));
    if (entry && !entry.editing) dropMemory(entry);
  }
}

// ---- Events --------------------------------------------------------------

function showError(error) {
  $('post-status').className = '';
  $('post-status').textContent = error.message;
}

function onMessages(messages) {
  keepingScroll(() => {
    for (const m of messages) showMessage(m);
  });
  if (bufferedForLoads({ messages }) || !view.memoriesLoaded) return;
  applyMemoryEvent({ messages });
  trimMemories();
}

/** New read states of direct messages: each shown row's badges are replaced in place. */
function onReadStates(changes) {
  for (const { seq, read } of changes) {
    for (const li of [rows.get(seq), ...document.querySelectorAll(`#search-results li[data-seq="${seq}"]`)]) {
      li?.querySelector(':scope > .meta > .read-states')?.replaceWith(readStatesOf(read));
    }
  }
}

function onTombstoned(seqs) {
  keepingScroll(() => {
    for (const seq of seqs) removeMessage(seq);
  });
  if (bufferedForLoads({ tombstoned: seqs })) return;
  applyMemoryEvent({ tombstoned: seqs });
}

function connect() {
  const events = new EventSource(`/events?token=${encodeURIComponent(token)}`);
  events.addEventListener('waiting', (event) => {
    $('connection').textContent = 'waiting for the first agent';
    $('connection').className = 'bad';
    $('waiting').textContent = JSON.parse(event.data).message;
    $('waiting').hidden = false;
  });
  events.addEventListener('hello', () => {
    view.live = true;
    $('connection').textContent = 'live';
    $('connection').className = 'ok';
    $('waiting').hidden = true;
    // From nothing, as a reload: a stream that dropped may have missed events.
    void api('/api/state').then(renderState).catch(showError);
    void resetMessages().catch(showError);
    if (view.memoriesLoaded || view.tab === 'memories') void loadMemories().catch(showError);
  });
  events.addEventListener('messages', (event) => onMessages(JSON.parse(event.data)));
  events.addEventListener('tombstoned', (event) => onTombstoned(JSON.parse(event.data)));
  events.addEventListener('read_states', (event) => onReadStates(JSON.parse(event.data)));
  events.addEventListener('state', (event) => renderState(JSON.parse(event.data)));
  events.addEventListener('error', () => {
    $('connection').textContent = 'reconnecting…';
    $('connection').className = 'bad';
  });
}

$('post-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const target = $('post-channel').value;
  const body = target.startsWith(TO) ? { to: [target.slice(TO.length)], content: $('post-text').value } : { channel: target, content: $('post-text').value };
  if (view.replyTo !== null) body.reply_to = view.replyTo;
  try {
    const result = await api('/api/post', body);
    $('post-text').value = '';
    cancelReply();
    $('post-status').className = 'ok';
    $('post-status').textContent = result.to ? `sent ${result.seq} to ${result.to.join(', ')} as ${result.as}` : `sent ${result.seq} as ${result.as}`;
  } catch (error) { showError(error); }
});
$('reply-cancel').addEventListener('click', cancelReply);
$('older').addEventListener('click', () => void loadPage(view.oldest).catch(showError));

$('search-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const params = new URLSearchParams({ q: $('search-query').value });
  if ($('search-mode').value) params.set('mode', $('search-mode').value);
  try {
    const result = await api(`/api/search?${params}`);
    $('search-status').textContent = `${result.results.length} results (${result.mode})${result.notices.map((n) => ` · ${n.kind}: ${n.message}`).join('')}`;
    $('search-results').replaceChildren(...result.results.map((hit) => messageItem(hit)));
  } catch (error) { $('search-status').textContent = error.message; }
});

for (const button of document.querySelectorAll('#tabs button')) {
  button.addEventListener('click', () => {
    view.tab = button.dataset.tab;
    for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b === button);
    for (const tab of ['messages', 'memories', 'search']) $(`tab-${tab}`).hidden = tab !== view.tab;
    if (view.tab === 'memories' && view.live) void loadMemories().catch(showError);
  });
}

connect();
