/**
 * Structured logger the host can replace. Fields carry ids and codes only: nothing that could be a
 * secret (values, tokens, request bodies) is ever passed to it by runplane.
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Warnings and errors as one JSON line on stderr; debug and info are dropped. */
export function createConsoleLogger(): Logger {
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    process.stderr.write(`${JSON.stringify({ level, message, ...fields })}\n`);
  };
  return { debug() {}, info() {}, warn: write("warn"), error: write("error") };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
