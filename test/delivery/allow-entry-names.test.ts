import { describe, expect, it } from "vitest";
import { allowEntryProblem } from "../../src/delivery/allow-entries.js";

// Found from outside: EGRESS_ALLOW=* was taken as a literal host name, so an operator who meant
// "everything" got nothing and no error; wildcard spellings are refused with their reason.
describe("allowlist host-name entries", () => {
  it.each(["*", "*.corp.example", "scanner.*", "a b.example", "scanner!.example"])("refuses %s, which is not a host name", (entry) => {
    expect(allowEntryProblem(entry)).toMatch(/host name|wildcard/);
  });

  it.each(["scanner.corp.example", "scanner.corp.example:8443", "xn--bcher-kva.example", "under_score.example", "Scanner.Corp.Example."])("takes %s", (entry) => {
    expect(allowEntryProblem(entry)).toBeNull();
  });

  it("says a URL is a URL, not a host with a bad port", () => {
    expect(allowEntryProblem("http://scanner.internal")).toMatch(/is a URL/);
    expect(allowEntryProblem("https://scanner.internal:8443/hook")).toMatch(/is a URL/);
  });
});
