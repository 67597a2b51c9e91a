/** `n` and the word for it, singular for one: "1 team", "2 policy sets", "3 API tokens". */
export const counted = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
