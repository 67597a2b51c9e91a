/**
 * Optional peer dependencies (pg, better-sqlite3, the OpenTelemetry SDK of the reference server) are
 * loaded only where they are used, so that a user who never chooses them never installs them.
 * `load` is a literal `() => import("pg")` at the call site: the bundler then keeps the
 * import external and TypeScript keeps its types.
 */
export class MissingPeerError extends Error {
  override readonly name = "MissingPeerError";
  constructor(
    readonly packageName: string,
    purpose: string,
    cause: unknown,
  ) {
    super(`${purpose} needs the package ${packageName}, which is not installed: npm install ${packageName}`, { cause });
  }
}

/** Imports an optional peer; a missing package becomes one {@link MissingPeerError} line naming it. */
export async function importOptional<T>(load: () => Promise<T>, packageName: string, purpose: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, packageName)) throw new MissingPeerError(packageName, purpose, error);
    throw error;
  }
}

/** Node's "cannot find package" for this package, not for something it imports in turn. */
function isMissing(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  return typeof message === "string" && (message.includes(`'${packageName}'`) || message.includes(`"${packageName}"`));
}
