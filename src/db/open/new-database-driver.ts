/**
 * The driver a new database would get here, for `status` and `doctor` before
 * the first `agentbus mcp`: the steps of open-plan.ts for a new file, tried
 * the way open-database.ts tries them (each driver loaded, nothing opened),
 * so the rule of which driver a new file gets lives only in the plan.
 */
import type { DriverName, LockProtocol } from '../contract/driver.js';
import { openSteps } from './open-plan.js';
import { REINSTALL } from './open-messages.js';
import { changeDriverSetting, describeDriverSetting, loadDriver, type DriverChoice, type DriverChoiceSource } from './select-driver.js';

/** The driver a new database would get here, and why. */
export interface NewDatabaseDriver {
  /** The driver `agentbus mcp` would create the database with; undefined when the choice cannot run here. */
  readonly driver: DriverName | undefined;
  /** The lock protocol the new file would record. */
  readonly lockProtocol: LockProtocol | undefined;
  /** Why, in words: the setting that decided, and what loaded. */
  readonly why: string;
}

/** Why the driver of an `open` step that loaded is the one, given the reasons the steps before it did not load. */
function whyOpens(choice: DriverChoice, source: DriverChoiceSource, reasons: readonly string[]): string {
  if (choice !== 'auto') return `${describeDriverSetting(choice, source)} asks for it`;
  if (reasons.length === 0) {
    return `auto: node:sqlite runs on this Node (${process.version}); a Node 20 agentbus mcp converts the file to portable by itself when it finds no process holding it`;
  }
  return `auto: ${reasons.join('; ')}`;
}

/** Decides as opening a new database does (open-database.ts), without opening anything. */
export async function newDatabaseDriver(choice: DriverChoice, source: DriverChoiceSource): Promise<NewDatabaseDriver> {
  const reasons: string[] = [];
  let because: 'setting_cannot_run' | 'no_driver' | undefined;
  for (const step of openSteps('new', choice, false)) {
    if (step.kind === 'open') {
      const loaded = await loadDriver(step.driver);
      if (loaded.ok) return { driver: step.driver, lockProtocol: loaded.driver.capabilities.lockProtocol, why: whyOpens(choice, source, reasons) };
      reasons.push(loaded.reason);
    } else if (step.because === 'setting_cannot_run' || step.because === 'no_driver') {
      because = step.because;
      break;
    }
  }
  const why =
    because === 'setting_cannot_run'
      ? `${describeDriverSetting(choice, source)} asks for the ${choice} driver, but ${reasons.at(-1) ?? ''}; ${changeDriverSetting(source, 'auto')}`
      : `no driver can run here (${reasons.join('; ')}); ${REINSTALL}`;
  return { driver: undefined, lockProtocol: undefined, why };
}
