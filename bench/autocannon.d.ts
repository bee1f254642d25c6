/** The part of autocannon 8's API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  interface Histogram {
    readonly average: number;
    readonly p50: number;
    readonly p99: number;
    readonly max: number;
  }
  interface Result {
    readonly requests: Histogram & { readonly total: number };
    readonly latency: Histogram;
    readonly throughput: Histogram;
    readonly non2xx: number;
    readonly errors: number;
    readonly timeouts: number;
    /** Answers per status code. */
    readonly statusCodeStats: Readonly<Record<string, { readonly count: number }>>;
  }
  interface Options {
    readonly url: string;
    readonly connections?: number;
    readonly pipelining?: number;
    readonly duration?: number;
    readonly amount?: number;
    readonly headers?: Readonly<Record<string, string>>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
