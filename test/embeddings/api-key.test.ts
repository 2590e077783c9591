import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseKeyFile, resolveApiKey } from '../../src/embeddings/api-key.js';
import { EmbeddingError } from '../../src/embeddings/embedding-error.js';
import { expectErrorSync } from '../support/expect-error.js';
import { tempDir } from '../support/test-driver.js';

const SECRET = 'sk-test-0123456789abcdef';

function parseError(text: string): EmbeddingError {
  return expectErrorSync(() => parseKeyFile(text), EmbeddingError);
}

describe('key file parsing', () => {
  it('accepts a bare key, with or without a trailing newline', () => {
    expect(parseKeyFile(SECRET)).toBe(SECRET);
    expect(parseKeyFile(`${SECRET}\n`)).toBe(SECRET);
    expect(parseKeyFile(`  ${SECRET}  \r\n\n`)).toBe(SECRET);
  });

  it('accepts a bare base64 key ending in "=" signs', () => {
    expect(parseKeyFile('QUJDREVGR0g==')).toBe('QUJDREVGR0g==');
  });

  it('accepts export and assignment forms with single, double or no quotes', () => {
    expect(parseKeyFile(`export OPENAI_API_KEY='${SECRET}'\n`)).toBe(SECRET);
    expect(parseKeyFile(`export OPENAI_API_KEY="${SECRET}"`)).toBe(SECRET);
    expect(parseKeyFile(`OPENAI_API_KEY=${SECRET}`)).toBe(SECRET);
    expect(parseKeyFile(`VOYAGE_KEY = "${SECRET}"`)).toBe(SECRET);
  });

  it('ignores comments and blank lines around the one key line', () => {
    expect(parseKeyFile(`# my key\n\nexport KEY='${SECRET}'\n# end\n`)).toBe(SECRET);
  });

  it('refuses garbage with kind key and a message that never contains the content', () => {
    const cases = [
      '',
      '\n\n  \n',
      `${SECRET}\n${SECRET}`,
      `export KEY='${SECRET}`,
      `KEY="${SECRET}'`,
      `KEY=''`,
      'two words',
      `export KEY='${SECRET} with space'`,
    ];
    for (const text of cases) {
      const error = parseError(text);
      expect(error.kind).toBe('key');
      expect(error.message).not.toContain(SECRET);
      expect(error.message).not.toContain('two words');
    }
  });
});

describe('key resolution', () => {
  it('prefers the environment variable when set and non-empty, else the file, else no key', () => {
    const dir = tempDir();
    const file = join(dir, 'key');
    writeFileSync(file, "export K='from-file'\n");
    expect(resolveApiKey({ embedding_api_key_env: 'AB_KEY', embedding_api_key_file: file }, { AB_KEY: 'from-env' })).toBe('from-env');
    expect(resolveApiKey({ embedding_api_key_env: 'AB_KEY', embedding_api_key_file: file }, { AB_KEY: '' })).toBe('from-file');
    expect(resolveApiKey({ embedding_api_key_env: 'AB_KEY', embedding_api_key_file: file }, {})).toBe('from-file');
    expect(resolveApiKey({ embedding_api_key_env: 'AB_KEY' }, {})).toBeUndefined();
    expect(resolveApiKey({}, {})).toBeUndefined();
  });

  it('reports an unreadable key file as kind key', () => {
    const missing = join(tempDir(), 'no-such-key');
    expect(expectErrorSync(() => resolveApiKey({ embedding_api_key_file: missing }, {}), EmbeddingError).kind).toBe('key');
  });
});
