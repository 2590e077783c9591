// Types of scripts/pack-install.js for the TypeScript that imports it (the
// tests' global setup); the script itself stays plain JavaScript run by node.

/** What packAndInstall made. */
export interface PackedInstall {
  /** The tarball `npm pack` made. */
  readonly tarball: string;
  /** The project it was installed into (holds node_modules/.bin/agentbus). */
  readonly project: string;
  /** node_modules/agentbus-mcp inside that project. */
  readonly packageDir: string;
  /** What `npm install <tarball>` printed (warnings included). */
  readonly installOutput: string;
  /** The Node whose npm installed it. */
  readonly nodeVersion: string;
}

/** The npm to run as [command, leading arguments]: the one running `npm run`, else the one beside `node`. */
export function npmCommand(node?: string): [string, string[]];

/** Packs the built checkout into `dir` and installs the tarball into `dir`/project, with the npm of `node`. */
export function packAndInstall(dir: string, options?: { node?: string }): PackedInstall;
