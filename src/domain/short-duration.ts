/** A duration in words for a reason or a log line: `1h2m`, `45s`, `0s` (whole seconds, units that are not zero). */
export function shortDuration(ms: number): string {
  const total = Math.floor(ms / 1000);
  const parts: [number, string][] = [
    [Math.floor(total / 3600), "h"],
    [Math.floor((total % 3600) / 60), "m"],
    [total % 60, "s"],
  ];
  return parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`).join("") || "0s";
}
