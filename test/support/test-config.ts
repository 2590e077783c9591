/**
 * The one way tests build a configuration: the defaults as `loadConfig` gives
 * them for a data directory with no config file, plus overrides. Overrides
 * bypass the file schema on purpose (budgets below its minimum, for example).
 */
import { loadConfig, type Config } from '../../src/config.js';
import { ON_POSTGRES, testDatabaseUrl } from './test-databases.js';

export function testConfig(dataDir: string, overrides: Partial<Config> = {}): Config {
  // In the postgres project the bus is the data directory's database on the cluster, named by AGENTBUS_DATABASE_URL.
  const env = ON_POSTGRES ? { AGENTBUS_DATA_DIR: dataDir, AGENTBUS_DATABASE_URL: testDatabaseUrl(dataDir) } : { AGENTBUS_DATA_DIR: dataDir };
  return { ...loadConfig({ env, homeDir: dataDir, cwd: dataDir }), ...overrides };
}
