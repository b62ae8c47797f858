/**
 * The part of zod that src/contract/search-index.ts uses, for the browser bundle only: the page's engine would
 * otherwise ship all of zod (about 90 KB gzipped) to validate one small header. It validates for real (the bundle test
 * runs the page's engine over real and damaged headers); a schema that uses anything else fails the bundle's build
 * loudly, since the missing method is called when the module loads.
 */
type Result = { success: true; data: unknown } | { success: false; error: { issues: { message: string }[] } };
type Check = (value: unknown, path: string) => string | null;

class Schema {
  constructor(private readonly checks: Check[]) {}
  protected with(check: Check): this {
    const next = Object.create(Object.getPrototypeOf(this)) as this;
    Object.assign(next, this, { checks: [...this.checks, check] });
    return next;
  }
  check(value: unknown, path: string): string | null {
    for (const c of this.checks) {
      const problem = c(value, path);
      if (problem) return problem;
    }
    return null;
  }
  safeParse(value: unknown): Result {
    const problem = this.check(value, 'header');
    return problem ? { success: false, error: { issues: [{ message: problem }] } } : { success: true, data: value };
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

const of = (check: Check) => new Schema([check]);

export const z = {
  int: () => new NumberSchema([(v, p) => (Number.isSafeInteger(v) ? null : `${p} must be an integer`)]),
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
};
