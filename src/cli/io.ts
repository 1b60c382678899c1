// What every command shares: its exit codes (DESIGN: 0 ok, 1 runtime failure, 2 bad usage or config)
// and the streams and folder it runs with (tests pass their own).
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export interface CommandIo {
  readonly cwd: string;
  readonly stdout: { write(s: string): unknown };
  readonly stderr: { write(s: string): unknown };
}
