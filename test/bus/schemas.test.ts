import { describe, expect, it } from 'vitest';
import * as channels from '../../src/bus/channels.js';
import * as history from '../../src/bus/history.js';
import * as identity from '../../src/bus/identity.js';
import * as messageStatus from '../../src/bus/message-status.js';
import * as receive from '../../src/bus/receive.js';
import * as send from '../../src/bus/send.js';
import { inputJsonSchema, outputJsonSchema } from '../../src/mcp/json-schema.js';

// The MCP layer publishes these as JSON Schema (draft-07, inputs as the caller writes them); every one must convert.
const schemas = {
  register: [identity.RegisterInput, identity.RegisterOutput],
  discover: [identity.DiscoverInput, identity.DiscoverOutput],
  create_channel: [channels.CreateChannelInput, channels.CreateChannelOutput],
  list_channels: [channels.ListChannelsInput, channels.ListChannelsOutput],
  subscribe: [channels.SubscribeInput, channels.SubscribeOutput],
  unsubscribe: [channels.UnsubscribeInput, channels.UnsubscribeOutput],
  send: [send.SendInput, send.SendOutput],
  receive: [receive.ReceiveInput, receive.ReceiveOutput],
  history: [history.HistoryInput, history.HistoryOutput],
  message_status: [messageStatus.MessageStatusInput, messageStatus.MessageStatusOutput],
} as const;

describe('operation schemas', () => {
  it.each(Object.entries(schemas))('%s converts to a draft-07 object schema, inputs closed to extra fields', (_name, [input, output]) => {
    const inSchema = inputJsonSchema(input);
    const outSchema = outputJsonSchema(output);
    expect(inSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(outSchema).toMatchObject({ type: 'object' });
  });

  it('uses the architecture field names', () => {
    expect(Object.keys(identity.RegisterInput.entries)).toEqual(['name', 'parent', 'context', 'resume']);
    expect(Object.keys(send.SendInput.entries)).toEqual(['as', 'channel', 'to', 'content', 'type', 'reply_to', 'metadata', 'references', 'idempotency_key']);
    expect(Object.keys(receive.ReceiveInput.entries)).toEqual(['as', 'ack', 'count', 'wait_seconds', 'channels', 'include_own', 'reply_to']);
    expect(Object.keys(history.HistoryInput.entries)).toEqual(['as', 'channel', 'direct', 'with', 'before', 'after', 'count']);
    expect(Object.keys(receive.ReceiveOutput.entries)).toEqual(['messages', 'batch_token', 'redelivered', 'notices', 'instruction']);
    expect(Object.keys(channels.CreateChannelInput.entries)).toEqual(['as', 'name', 'kind']);
    expect(inputJsonSchema(send.SendInput).required).toEqual(['as', 'content']);
  });
});
