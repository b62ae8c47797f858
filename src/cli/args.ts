import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<O extends Options> = ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>>['values'];

/** A command's mistake of use (a missing or bad option): one line on stderr and exit 2, as for an unknown option. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * Every command of the repository reads its arguments the same way: `--help` (or `-h`) prints `usage` on stdout
 * and exits 0; an unknown option, a missing value or a stray argument prints one line on stderr and exits 2.
 */
export function parseCommandLine<const O extends Options>(command: string, usage: string, options: O, args: readonly string[] = process.argv.slice(2)): Values<O> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage);
    process.exit(0);
  }
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: false }).values as Values<O>;
  } catch (err) {
    return usageFailure(command, err);
  }
}

/** Prints one line naming the mistake and exits 2. */
export function usageFailure(command: string, err: unknown): never {
  // node:util's messages go on with advice about `--`; the first sentence names the problem.
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]?.replace(/\. To specify a positional.*$/, '') ?? '';
  console.error(`${command}: ${message} (see --help)`);
  process.exit(2);
}

/**
 * Runs a command's body: a UsageError exits 2 with one line, any other error prints `failed` and its message and
 * sets exit code 1 (so output still flushes).
 */
export function runCommand(command: string, main: () => Promise<void>, afterFailure: readonly string[] = []): void {
  main().catch((err: unknown) => {
    if (err instanceof UsageError) usageFailure(command, err);
    console.error(`${command} failed: ${err instanceof Error ? err.message : String(err)}`);
    for (const line of afterFailure) console.error(line);
    process.exitCode = 1;
  });
}

/**
 * A command with subcommands (`npm run predicates -- extract …`): no subcommand prints `usage` and exits 2, `--help`
 * prints it and exits 0, an unknown one (or an option before any) prints one line and exits 2; otherwise the named
 * subcommand runs with the arguments after it, through runCommand.
 */
export function runSubcommand(program: string, usage: string, commands: Readonly<Record<string, (args: string[]) => Promise<void>>>, argv: readonly string[] = process.argv.slice(2)): void {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') {
    console.log(usage);
    process.exit(command === undefined ? 2 : 0);
  }
  const run = Object.hasOwn(commands, command) ? commands[command] : undefined;
  if (!run) {
    console.error(command.startsWith('-') ? `${program}: Unknown option '${command}' (see --help)` : `${program}: unknown command '${command}' (see --help)`);
    process.exit(2);
  }
  runCommand(`${program} ${command}`, () => run(rest));
}
