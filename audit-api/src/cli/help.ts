import type { Command, Help, Option } from "commander";

/** The parts of a command's help page that commander does not hold: examples and the output's shape. */
export interface HelpPage {
  name: string;
  description: string;
  examples: string;
  output: string;
}

const WIDTH = 100;

function wrap(text: string, indent: number): string {
  const pad = " ".repeat(indent);
  return text
    .split("\n")
    .map((paragraph) => {
      if (paragraph.startsWith(" ")) return pad + paragraph; // preformatted (commands in EXAMPLES)
      const lines: string[] = [];
      let line = "";
      for (const word of paragraph.split(" ")) {
        if (line && line.length + word.length + 1 > WIDTH - indent) {
          lines.push(line);
          line = word;
        } else {
          line = line ? `${line} ${word}` : word;
        }
      }
      lines.push(line);
      return lines.map((l) => (l ? pad + l : "")).join("\n");
    })
    .join("\n");
}

/** `(timestamp)` for `--start-time <timestamp>`, `(boolean)` for a flag without a value. */
function typeOf(option: Option): string {
  const match = /<([^>]+)>|\[([^\]]+)\]/.exec(option.flags);
  return `(${match?.[1] ?? match?.[2] ?? "boolean"})`;
}

function describe(option: Option): string {
  let text = option.description;
  if (option.argChoices) text += `\nPossible values: ${option.argChoices.join(", ")}`;
  if (option.envVar) text += `\nEnvironment: ${option.envVar}`;
  if (option.defaultValue !== undefined && typeof option.defaultValue !== "boolean") {
    text += `\nDefault: ${String(option.defaultValue)}`;
  }
  return text;
}

/**
 * A help page laid out as the AWS CLI's (`aws cloudtrail lookup-events help`): NAME, DESCRIPTION, SYNOPSIS with one
 * option a line, OPTIONS each with its type and a paragraph, EXAMPLES, OUTPUT.
 */
export function awsStyleHelp(page: HelpPage) {
  return (command: Command, helper: Help): string => {
    const options = helper.visibleOptions(command).filter((o) => o.long !== "--help");
    const synopsis = options.map((o) => {
      const flag = `${o.long ?? o.short}${/<|\[/.test(o.flags) ? ` <value>` : ""}`;
      return `          ${o.mandatory ? flag : `[${flag}]`}`;
    });
    const described = options.map((o) => `       ${o.long ?? o.short} ${typeOf(o)}\n${wrap(describe(o), 10)}`);
    const subcommands = helper.visibleCommands(command).filter((c) => c.name() !== "help");
    return [
      "NAME",
      `       ${page.name} -`,
      "",
      "DESCRIPTION",
      wrap(page.description, 7),
      "",
      "SYNOPSIS",
      `          ${helper.commandUsage(command).replace(/ \[options\].*$/, "")}`,
      ...synopsis,
      ...(subcommands.length > 0
        ? ["", "AVAILABLE COMMANDS", ...subcommands.map((c) => `       o ${c.name()}\n${wrap(c.description(), 10)}`)]
        : []),
      "",
      "OPTIONS",
      described.join("\n\n"),
      "",
      "EXAMPLES",
      wrap(page.examples, 7),
      "",
      "OUTPUT",
      wrap(page.output, 7),
      "",
    ].join("\n");
  };
}
