import { describe, expect, it } from "vitest";
import { sliceBody, toArtifactResponse } from "../../src/http/artifact-body.js";

const LOG = new TextEncoder().encode("Initializing...\nPlan: 2 to add, 1 to change, 0 to destroy. ✓\n");

/** The log as a provider streams it: a Node-style async iterable of uneven chunks. */
async function* chunked(bytes: Uint8Array, sizes: readonly number[]): AsyncIterable<Uint8Array> {
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    yield bytes.slice(at, at + size);
    at += size;
  }
}

const read = async (response: Response): Promise<Uint8Array> => new Uint8Array(await response.arrayBuffer());

/** go-tfe's log reader asks for a log by `?offset=&limit=`; a provider may stream it. */
describe("sliceBody: a log read in chunks from a streamed provider answer", () => {
  const streamed = () => toArtifactResponse(chunked(LOG, [7, 3, 11, 5]), "planLog")!;

  it("gives the same bytes at every offset and limit as slicing the whole log", async () => {
    for (const limit of [1, 4, 9, 16, 100]) {
      for (let offset = 0; offset <= LOG.length; offset++) {
        const got = await read(sliceBody(streamed(), offset, limit));
        expect(got, `offset ${offset}, limit ${limit}`).toStrictEqual(LOG.slice(offset, offset + limit));
      }
    }
  });

  it("reads to the end without a limit, and nothing past the end", async () => {
    for (const offset of [0, 5, 8, 20, LOG.length - 1]) {
      expect(await read(sliceBody(streamed(), offset, undefined)), `offset ${offset}`).toStrictEqual(LOG.slice(offset));
    }
    expect(await read(sliceBody(streamed(), LOG.length + 3, 10))).toStrictEqual(new Uint8Array());
  });

  it("reassembles the whole log when read in consecutive chunks, as go-tfe does", async () => {
    const parts: number[] = [];
    for (let offset = 0; ; offset += 6) {
      const part = await read(sliceBody(streamed(), offset, 6));
      if (part.length === 0) break;
      parts.push(...part);
    }
    expect(new Uint8Array(parts)).toStrictEqual(LOG);
  });
});
