import { gzipSync } from "node:zlib";

/**
 * A `.tar.gz` of a few small text files, written by hand: one ustar header per file (POSIX
 * 1003.1-1988), the data padded to 512-byte blocks, two zero blocks at the end, then gzip. Enough
 * for a demo configuration version; no binary is committed.
 */
export interface TarFile {
  name: string;
  content: string;
}

const BLOCK = 512;
const encoder = new TextEncoder();

/** An octal field of `width` bytes: digits, zero-padded, then a NUL. */
const octal = (value: number, width: number): string => `${value.toString(8).padStart(width - 1, "0")}\0`;

function header(name: string, size: number, mtime: number): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const put = (offset: number, text: string): void => block.set(encoder.encode(text), offset);
  if (encoder.encode(name).length > 100) throw new Error(`tar: name too long: ${name}`);
  put(0, name);
  put(100, octal(0o644, 8));
  put(108, octal(0, 8));
  put(116, octal(0, 8));
  put(124, octal(size, 12));
  put(136, octal(mtime, 12));
  put(148, "        "); // the checksum counts its own field as eight spaces
  put(156, "0"); // a regular file
  put(257, "ustar\u000000");
  const sum = block.reduce((total, byte) => total + byte, 0);
  put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

/** The gzip-compressed tar archive of `files`, each with modification time `mtime` (seconds). */
export function tarGz(files: readonly TarFile[], mtime = 0): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const file of files) {
    const data = encoder.encode(file.content);
    parts.push(header(file.name, data.length, mtime), data, new Uint8Array((BLOCK - (data.length % BLOCK)) % BLOCK));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  return new Uint8Array(gzipSync(Buffer.concat(parts)));
}
