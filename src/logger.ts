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

/**
 * A pino-style logger (`logger.info(fields, message)`), as pino, bunyan-like and many hosts'
 * loggers are; recognised by its `levels` map and `child` function and passed fields first.
 */
export interface PinoLikeLogger {
  levels: object;
  child: (...args: never[]) => unknown;
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Options of {@link createConsoleLogger}. */
export interface ConsoleLoggerOptions {
  /** Lowest level written. Default `"warn"`. */
  level?: LogLevel;
  /** Where lines go. Default `process.stderr`. */
  write?: (line: string) => void;
}

/** Events at or above `level` (default warn) as one JSON line each on stderr, with a `time`. */
export function createConsoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const min = LOG_LEVELS.indexOf(options.level ?? "warn");
  if (min < 0) throw new TypeError(`createConsoleLogger: level must be one of ${LOG_LEVELS.join(", ")}`);
  const out = options.write ?? ((line: string) => void process.stderr.write(line));
  const make = (level: LogLevel) =>
    LOG_LEVELS.indexOf(level) < min
      ? LOG_OFF
      : (message: string, fields?: Record<string, unknown>) => out(`${JSON.stringify({ level, time: new Date().toISOString(), message, ...fields })}\n`);
  return { debug: make("debug"), info: make("info"), warn: make("warn"), error: make("error") };
}

/**
 * The method of runplane's own loggers for a level they do not write. Hot paths (every delivery
 * attempt, every status change) compare against it before building a log event's fields, which
 * cost more than the call they feed; any other logger is always called.
 */
export const LOG_OFF = (): void => undefined;

/** Whether `logger` would write at `level`: false only for runplane's own loggers below their level. */
export const logs = (logger: Logger, level: LogLevel): boolean => logger[level] !== LOG_OFF;

export const silentLogger: Logger = { debug: LOG_OFF, info: LOG_OFF, warn: LOG_OFF, error: LOG_OFF };

function isPinoLike(logger: Logger | PinoLikeLogger): logger is PinoLikeLogger {
  const l = logger as Partial<PinoLikeLogger>;
  return typeof l.levels === "object" && l.levels !== null && typeof l.child === "function";
}

/** The host's logger as runplane calls it: a pino-style one gets its fields first. */
export function toLogger(logger: Logger | PinoLikeLogger): Logger {
  if (!isPinoLike(logger)) return logger;
  const call = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => logger[level](fields ?? {}, message);
  return { debug: call("debug"), info: call("info"), warn: call("warn"), error: call("error") };
}

/**
 * Where a failure happened, for the debug log: the error's name and its stack frames, never its
 * message. A database error's message may quote the values it refused, a secret among them, and
 * `error.stack` starts with that message.
 */
export function failureFrames(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const frames = (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  return [error.name, ...frames].join("\n");
}
