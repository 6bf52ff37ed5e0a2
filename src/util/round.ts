/** `x` to `digits` decimals, as a number (records keep short, stable figures). */
export const round = (x: number, digits: number) => Number(x.toFixed(digits));
