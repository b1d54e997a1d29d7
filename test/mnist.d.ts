/** The `mnist` package (MIT): 10,000 handwritten digits, 28 × 28 pixels in [0, 1], a thousand or so of each digit. */
declare module "mnist" {
  interface Digit {
    /** 784 pixels, row by row. */
    input: number[];
    /** One-hot: 1 at the digit. */
    output: number[];
  }
  interface DigitSet {
    id: number;
    length: number;
    raw: number[][];
    get(index: number): number[];
    range(start: number, end: number): number[][];
    set(start: number, end: number): Digit[];
  }
  const digits: DigitSet[] & { set(training: number, test: number): { training: Digit[]; test: Digit[] } };
  export default digits;
}
