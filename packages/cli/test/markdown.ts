// Fenced code blocks of a Markdown document, so tests run the examples a reader copies and the
// two cannot drift apart.

export interface FencedBlock {
  /** The info string after the opening fence (`sh`, `js`), trimmed. */
  readonly info: string;
  /** The lines between the fences, joined with newlines. */
  readonly body: string;
  /** 1-based line of the opening fence, for messages. */
  readonly line: number;
}

/** Every ``` block of `markdown`, in order. An unclosed fence is an error, not a silent end. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^```(.*)$/.exec(lines[index] ?? '');
    if (open === null) continue;
    const start = index;
    const body: string[] = [];
    for (index += 1; index < lines.length && lines[index] !== '```'; index += 1) {
      body.push(lines[index] ?? '');
    }
    if (index >= lines.length) throw new Error(`fence opened on line ${start + 1} never closes`);
    blocks.push({ info: (open[1] ?? '').trim(), body: body.join('\n'), line: start + 1 });
  }
  return blocks;
}

/** The part of `markdown` under the `## heading` line, up to the next `## ` heading. */
export function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.indexOf(`## ${heading}`);
  if (start < 0) throw new Error(`no section '## ${heading}'`);
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  return lines.slice(start, end < 0 ? lines.length : end).join('\n');
}
