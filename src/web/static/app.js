// The agentbus web console. Everything agents wrote is untrusted: it reaches
// the page only through textContent (el() below), never as HTML.
const token = decodeURIComponent(document.querySelector('meta[name="agentbus-token"]').content);
const $ = (id) => document.getElementById(id);

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

const view = { channel: null, replyTo: null, messages: new Map(), state: null, memoryMark: null, tab: 'messages' };
const when = (iso) => new Date(iso).toLocaleString();

function messageItem(m, { reply = false, actions = [] } = {}) {
  return el('li', { class: `message${reply ? ' reply' : ''}`, 'data-seq': m.seq },
    el('div', { class: 'meta' },
      el('span', { class: 'channel-name' }, `#${m.channel}`),
      el('span', { class: 'seq' }, `[${m.seq}]`),
      el('span', { class: 'sender' }, m.sender),
      el('span', { class: 'context' }, m.context ?? ''),
      el('time', { datetime: m.created_at }, when(m.created_at)),
      m.type ? el('span', { class: 'type' }, m.type) : null,
      m.reply_to !== null ? el('span', {}, `↳ re ${m.reply_to}`) : null,
      m.memory_id != null ? el('span', {}, `memory ${m.memory_id} rev ${m.revision}`) : null),
    el('div', { class: 'content' }, m.content),
    actions.length ? el('div', { class: 'actions' }, actions) : null);
}

function renderMessages() {
  const list = $('messages');
  const shown = [...view.messages.values()].filter((m) => view.channel === null || m.channel === view.channel).sort((a, b) => a.seq - b.seq);
  const bySeq = new Map(shown.map((m) => [m.seq, m]));
  const replies = new Map();
  for (const m of shown) if (m.reply_to !== null && bySeq.has(m.reply_to)) (replies.get(m.reply_to) ?? replies.set(m.reply_to, []).get(m.reply_to)).push(m);
  const atBottom = list.lastElementChild === null || window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  const items = [];
  const add = (m, depth) => {
    items.push(messageItem(m, { reply: depth > 0, actions: [el('button', { type: 'button', class: 'reply-button', onclick: () => startReply(m) }, 'Reply')] }));
    for (const r of replies.get(m.seq) ?? []) add(r, depth + 1);
  };
  for (const m of shown) if (m.reply_to === null || !bySeq.has(m.reply_to)) add(m, 0);
  list.replaceChildren(...items);
  if (atBottom) window.scrollTo(0, document.body.scrollHeight);
}

function startReply(m) {
  view.replyTo = m.seq;
  $('post-channel').value = m.channel;
  $('reply-text').textContent = `Replying to [${m.seq}] ${m.sender}`;
  $('reply-note').hidden = false;
  $('post-text').focus();
}
function cancelReply() {
  view.replyTo = null;
  $('reply-note').hidden = true;
}

async function loadMessages() {
  const query = view.channel === null ? '' : `&channel=${encodeURIComponent(view.channel)}`;
  const { messages } = await api(`/api/messages?limit=200${query}`);
  for (const m of messages) view.messages.set(m.seq, m);
  renderMessages();
}

function renderState(state) {
  view.state = state;
  $('person').textContent = `posting as ${state.person}`;
  const usage = state.usage;
  $('capacity').textContent = usage ? `capacity ${usage.percent}% of ${(usage.budget_bytes / 1048576).toFixed(0)} MiB` : '';
  $('capacity').className = usage && usage.used_bytes > usage.target_bytes ? 'warn' : '';
  $('notices').replaceChildren(...state.notices.map((n) => el('li', { class: 'notice' }, `${n.kind}: ${n.message}`)));
  const channelItem = (name, label) => el('li', { class: `channel${view.channel === name ? ' active' : ''}`, onclick: () => selectChannel(name) }, label);
  $('channels').replaceChildren(
    channelItem(null, 'All channels'),
    ...state.channels.map((c) => channelItem(c.name, `#${c.name} `, el('span', { class: 'muted' }, `${c.kind} · ${c.messages} msgs · ${c.subscribers} subs`))),
  );
  $('sessions').replaceChildren(...(state.sessions.length ? state.sessions.map((s) => el('li', {}, s.display_name, ' ', el('span', { class: 'muted' }, `${s.context} · seen ${when(s.heartbeat_at)}`))) : [el('li', { class: 'muted' }, 'none')]));
  $('reservations').replaceChildren(
    ...(state.reservations.length
      ? state.reservations.map((r) => el('li', {}, `${r.pattern} `, el('span', { class: 'muted' }, `${r.display_name} · ${r.exclusive ? 'exclusive' : 'shared'} · until ${when(r.expires_at)}${r.taken_from ? ` · taken over from ${r.taken_from}` : ''}${r.reason ? ` · ${r.reason}` : ''}`)))
      : [el('li', { class: 'muted' }, 'none')]),
  );
  const select = $('post-channel');
  const chosen = select.value || view.channel;
  select.replaceChildren(...state.channels.map((c) => el('option', { value: c.name }, c.name)));
  if (chosen) select.value = chosen;
  $('search-mode').querySelector('option[value="semantic"]').disabled = !state.embeddings.enabled;
  $('search-mode').querySelector('option[value="both"]').disabled = !state.embeddings.enabled;
  if (view.memoryMark !== null && view.memoryMark !== state.memory_mark && view.tab === 'memories') void loadMemories();
  view.memoryMark = state.memory_mark;
}

function selectChannel(name) {
  view.channel = name;
  $('channel-title').textContent = name === null ? 'All channels' : `#${name}`;
  if (name !== null) $('post-channel').value = name;
  if (view.state) renderState(view.state);
  void loadMessages().catch(showError);
}

async function loadMemories() {
  const { memories } = await api('/api/memories?limit=200');
  $('memories').replaceChildren(...memories.map(memoryItem));
}

function memoryItem(m) {
  const li = messageItem(m, { actions: [] });
  li.className = 'memory';
  li.setAttribute('data-memory-id', m.memory_id);
  const history = el('ol', { class: 'revisions' });
  const edit = () => {
    const text = el('textarea', { class: 'edit-text', rows: 4 });
    text.value = m.content;
    const status = el('span', { class: 'error' });
    const save = el('button', { type: 'button', class: 'save-button', onclick: async () => {
      try {
        await api('/api/edit-memory', { memory_id: m.memory_id, content: text.value });
        await loadMemories();
      } catch (error) { status.textContent = error.message; }
    } }, 'Save');
    li.querySelector('.actions').replaceChildren(text, save, el('button', { type: 'button', onclick: () => loadMemories() }, 'Cancel'), status);
  };
  const remove = async () => {
    if (!confirm(`Delete memory ${m.memory_id}? Agents' get_memory will report it deleted.`)) return;
    try { await api('/api/delete-memory', { memory_id: m.memory_id }); await loadMemories(); } catch (error) { showError(error); }
  };
  const showHistory = async () => {
    const { revisions } = await api(`/api/memory-history?id=${m.memory_id}`);
    history.replaceChildren(...revisions.map((r) => {
      const item = messageItem(r);
      item.className = `revision${r.live ? '' : ' dead'}`;
      item.querySelector('.meta').append(el('span', {}, r.live ? 'live' : 'replaced or deleted'));
      return item;
    }));
  };
  li.append(el('div', { class: 'actions' },
    el('button', { type: 'button', class: 'edit-button', onclick: edit }, 'Edit'),
    el('button', { type: 'button', class: 'delete-button', onclick: remove }, 'Delete'),
    el('button', { type: 'button', class: 'history-button', onclick: () => showHistory().catch(showError) }, 'Revisions')), history);
  return li;
}

function showError(error) {
  $('post-status').className = '';
  $('post-status').textContent = error.message;
}

$('post-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const body = { channel: $('post-channel').value, content: $('post-text').value };
  if (view.replyTo !== null) body.reply_to = view.replyTo;
  try {
    const result = await api('/api/post', body);
    $('post-text').value = '';
    cancelReply();
    $('post-status').className = 'ok';
    $('post-status').textContent = `sent ${result.seq} as ${result.as}`;
  } catch (error) { showError(error); }
});
$('reply-cancel').addEventListener('click', cancelReply);

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
    if (view.tab === 'memories') void loadMemories().catch(showError);
  });
}

function connect() {
  const events = new EventSource(`/events?token=${encodeURIComponent(token)}`);
  events.addEventListener('hello', () => {
    $('connection').textContent = 'live';
    $('connection').className = 'ok';
    void loadMessages().catch(showError);
  });
  events.addEventListener('messages', (event) => {
    const messages = JSON.parse(event.data);
    for (const m of messages) if (m.memory_id == null || m.revision === 1) view.messages.set(m.seq, m);
    renderMessages();
    if (view.tab === 'memories' && messages.some((m) => m.memory_id != null)) void loadMemories().catch(showError);
  });
  events.addEventListener('state', (event) => renderState(JSON.parse(event.data)));
  events.addEventListener('error', () => {
    $('connection').textContent = 'reconnecting…';
    $('connection').className = 'bad';
  });
}

void api('/api/state').then(renderState).catch(showError);
connect();
