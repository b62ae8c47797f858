/**
 * The part of zod the search engine and the lineage walk parse with, for the browser bundles only: the page's engine
 * would otherwise ship all of zod (about 90 KB gzipped) to validate one small header. The headers' schemas
 * (src/contract/search-index.ts, src/contract/lineage.ts) validate for real; the bundle test runs the page's engine
 * over real and damaged headers, and the page's lineage test runs its walk over a snapshot's lineage header.
 *
 * Modules the engine imports for their constants also define other schemas when they load (src/contract/
 * operations.ts). Any method this subset lacks gives an "unsupported" schema, so those definitions load; parsing
 * with one throws, so a schema the engine does parse can never pass unchecked.
 */
type Result = { success: true; data: unknown } | { success: false; error: { issues: { message: string }[] } };
type Check = (value: unknown, path: string) => string | null;

const unsupported = (): never => {
  throw new Error('this schema uses a part of zod the browser bundle does not carry (build/page/zod-subset.ts)');
};

/**
 * What a missing part of zod gives: callable (a method: `z.iso.datetime()`) and with members (`.shape.query`), each
 * giving itself again, except that parsing or checking with it throws.
 */
const UNSUPPORTED: unknown = new Proxy(function unsupportedSchema() {}, {
  apply: () => UNSUPPORTED,
  get: (t, key) => {
    if (typeof key === 'symbol' || key === 'then') return Reflect.get(t, key);
    return key === 'check' || key === 'parse' || key === 'safeParse' ? unsupported : UNSUPPORTED;
  },
});

/** Unknown members of a schema (zod methods this subset lacks) give the unsupported schema above. */
const lenient = <T extends object>(target: T): T =>
  new Proxy(target, {
    get(t, key, receiver) {
      if (key in t || typeof key === 'symbol' || key === 'then') return Reflect.get(t, key, receiver);
      return UNSUPPORTED;
    },
  });

class Schema {
  constructor(private readonly checks: Check[]) {}
  protected with(check: Check): this {
    const next = Object.create(Object.getPrototypeOf(this)) as this;
    Object.assign(next, this, { checks: [...this.checks, check] });
    return lenient(next);
  }
  check(value: unknown, path: string): string | null {
    for (const c of this.checks) {
      const problem = c(value, path);
      if (problem) return problem;
    }
    return null;
  }
  /** Absent (undefined) passes; anything else is checked as before. */
  optional(): Schema {
    return lenient(new Schema([(v, p) => (v === undefined ? null : this.check(v, p))]));
  }
  safeParse(value: unknown): Result {
    const problem = this.check(value, 'header');
    return problem ? { success: false, error: { issues: [{ message: problem }] } } : { success: true, data: value };
  }
  parse(value: unknown): unknown {
    const problem = this.check(value, 'header');
    if (problem) throw new Error(problem);
    return value;
  }
  nullable(): Schema {
    return of((v, p) => (v === null ? null : this.check(v, p)));
  }
  max(n: number): this {
    return this.with((v, p) => ((Array.isArray(v) ? v.length : (v as number)) > n ? `${p} must be at most ${n}` : null));
  }
  regex(re: RegExp): this {
    return this.with((v, p) => (re.test(v as string) ? null : `${p} must match ${re}`));
  }
}

class NumberSchema extends Schema {
  min(n: number): this {
    return this.with((v, p) => ((v as number) < n ? `${p} must be at least ${n}` : null));
  }
  multipleOf(n: number): this {
    return this.with((v, p) => ((v as number) % n !== 0 ? `${p} must be a multiple of ${n}` : null));
  }
}

const of = (check: Check) => lenient(new Schema([check]));

export const z = lenient({
  string: () => of((v, p) => (typeof v === 'string' ? null : `${p} must be a string`)),
  literal: (value: unknown) => of((v, p) => (v === value ? null : `${p} must be ${JSON.stringify(value)}`)),
  enum: (values: readonly string[]) => of((v, p) => (values.includes(v as string) ? null : `${p} must be one of ${values.join(', ')}`)),
  array: (item: Schema) =>
    of((v, p) => {
      if (!Array.isArray(v)) return `${p} must be an array`;
      for (const [i, x] of v.entries()) {
        const problem = item.check(x, `${p}[${i}]`);
        if (problem) return problem;
      }
      return null;
    }),
  strictObject: (shape: Record<string, Schema>) =>
    of((v, p) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${p} must be an object`;
      for (const key of Object.keys(v)) if (!Object.hasOwn(shape, key)) return `${p}.${key} is not expected`;
      for (const [key, schema] of Object.entries(shape)) {
        const problem = schema.check((v as Record<string, unknown>)[key], `${p}.${key}`);
        if (problem) return problem;
      }
      return null;
    }),
  record: (key: Schema, value: Schema) =>
    of((v, p) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${p} must be an object`;
      for (const [k, x] of Object.entries(v)) {
        const problem = key.check(k, `${p} key`) ?? value.check(x, `${p}.${k}`);
        if (problem) return problem;
      }
      return null;
    }),
  int: () => lenient(new NumberSchema([(v, p) => (Number.isSafeInteger(v) ? null : `${p} must be an integer`)])),
});
