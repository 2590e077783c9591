/**
 * `agentbus doctor --json` output, checked against the report's shape
 * (src/cli/doctor-command.ts's DoctorReport) and typed, so a test reads one
 * check's status and message without casting.
 */
import * as v from 'valibot';
import type { Check } from '../../src/cli/commands/doctor/doctor-check.js';
import type { DoctorReport } from '../../src/cli/commands/doctor/doctor-command.js';

const CheckShape = v.object({
  name: v.string(),
  status: v.picklist(['ok', 'warn', 'problem', 'fixed']),
  message: v.string(),
  code: v.optional(v.string()),
});
const LeftOutShape = v.object({ checks: v.array(v.string()), reason: v.string() });
const ReportShape = v.object({ ok: v.boolean(), checks: v.array(CheckShape), leftOut: v.optional(LeftOutShape) });

/** The report itself, once its shape is checked; fails the test naming what did not match. */
export function doctorReport(json: unknown): DoctorReport {
  const result = v.safeParse(ReportShape, json);
  if (!result.success) throw new Error(`not a doctor report (${v.summarize(result.issues)}): ${JSON.stringify(json)}`);
  return result.output;
}

/** The check called `name` of a doctor report; fails the test when the report has none. */
export function doctorCheck(json: unknown, name: string): Check {
  const report = doctorReport(json);
  const check = report.checks.find((c) => c.name === name);
  if (check === undefined) throw new Error(`the doctor report has no check "${name}": ${report.checks.map((c) => c.name).join(', ')}`);
  return check;
}
