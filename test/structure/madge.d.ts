/** The part of madge's API the structure test uses (madge 8 ships no types). */
declare module 'madge' {
  type MadgeConfig = { baseDir?: string; fileExtensions?: string[]; excludeRegExp?: RegExp[]; tsConfig?: string };
  type MadgeResult = {
    /** Each file (relative to baseDir) and the files it imports. */
    obj(): Record<string, string[]>;
    /** Every circle found, each as the files along it. */
    circular(): string[][];
    warnings(): { skipped: string[] };
  };
  export default function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeResult>;
}
