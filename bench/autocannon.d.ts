// The subset of autocannon 9's programmatic API the benchmarks use (it ships no types).
declare module "autocannon" {
  namespace autocannon {
    interface Context {
      [key: string]: unknown;
    }
    interface RawRequest {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
    }
    interface Request extends RawRequest {
      setupRequest?: (request: RawRequest, context: Context) => RawRequest;
      onResponse?: (status: number, body: string, context: Context, headers: Record<string, string>) => void;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: Request[];
    }
    interface Result {
      "2xx": number;
      non2xx: number;
      errors: number;
      timeouts: number;
      duration: number;
      requests: { average: number; total: number };
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}
