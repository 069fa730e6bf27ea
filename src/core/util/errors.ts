/**
 * Error classes that decide faultline's exit code. Everything the user can fix (a malformed file, an
 * unreachable node, a refused key) is a UserError: one line, naming the file:line or node, exit 254.
 * Anything else escaping to the top is an internal error: exit 255.
 */

export const EXIT = {
  valid: 0,
  invalid: 1,
  unknown: 2,
  planMustNotRun: 3,
  badInput: 254,
  internal: 255,
} as const;

export class UserError extends Error {
  override readonly name: string = 'UserError';
  readonly exitCode: number;
  constructor(message: string, options?: { cause?: unknown; exitCode?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.exitCode = options?.exitCode ?? EXIT.badInput;
  }
}

/** A problem located in an input file: rendered as `file:line: field: reason`. */
export class InputError extends UserError {
  override readonly name: string = 'InputError';
  constructor(
    readonly file: string,
    readonly line: number | null,
    readonly field: string | null,
    readonly reason: string,
  ) {
    // One line whatever the input: a reason quoting the file's text keeps its newlines escaped.
    super(
      `${file}${line === null ? '' : `:${line}`}: ${field ? `${field}: ` : ''}${reason}`.replace(
        /\r?\n/g,
        '\\n',
      ),
    );
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Why an aborted signal was aborted (its reason's message), or null while it is not. */
export function abortReason(signal: AbortSignal): string | null {
  return signal.aborted ? errorMessage(signal.reason) : null;
}

/** A file the history readers could not open, as a one-line input error (other errors unchanged). */
export function fileInputError(file: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') return new InputError(file, null, null, 'no such file');
  if (code === 'EISDIR') return new InputError(file, null, null, 'is a directory');
  if (code === 'EACCES') return new InputError(file, null, null, 'permission denied');
  return err as Error;
}
