/**
 * The one way tests build a configuration: the defaults as `loadConfig` gives
 * them for a data directory with no config file, plus overrides. Overrides
 * bypass the file schema on purpose (budgets below its minimum, for example).
 */
import { loadConfig, type Config } from '../../src/config.js';

export function testConfig(dataDir: string, overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ env: { AGENTBUS_DATA_DIR: dataDir }, homeDir: dataDir, cwd: dataDir }), ...overrides };
}
