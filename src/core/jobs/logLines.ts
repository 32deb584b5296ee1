/**
 * A job log as a terminal shows it. Progress bars (tqdm, pip, rsync) redraw their line with
 * '\r' and no '\n', so a raw log can be one line of megabytes; a terminal shows only what
 * was drawn last. LogLines turns streamed text, cut anywhere, into display lines: a line's
 * last segment after a '\r' (CRLF is a plain line end), a line longer than `maxLine` cut
 * with the count of what is hidden. Memory stays bounded whatever the log: the line being
 * drawn keeps at most `maxLine` characters. What reaches the store or the curves parser is
 * the raw text; this is for display only.
 */
import { markHidden } from '../util/hidden';

export const MAX_DISPLAY_LINE = 4_000;

export class LogLines {
  /** The current line's last segment, at most maxLine characters. */
  private head = '';
  /** Characters of the current segment beyond `head`. */
  private extra = 0;
  /** A '\r' was read: the next character (other than '\n') starts the line over. */
  private redraw = false;

  constructor(private readonly maxLine = MAX_DISPLAY_LINE) {}

  /** The complete lines the new text ends, each with its '\n' ('' when it ends none). */
  write(text: string): string {
    let out = '';
    let at = 0;
    while (at < text.length) {
      const cr = text.indexOf('\r', at);
      const nl = text.indexOf('\n', at);
      const stop = cr === -1 ? nl : nl === -1 ? cr : Math.min(cr, nl);
      this.add(text.slice(at, stop === -1 ? text.length : stop));
      if (stop === -1) break;
      if (text[stop] === '\n') {
        out += `${this.line()}\n`;
        this.head = '';
        this.extra = 0;
        this.redraw = false;
      } else {
        this.redraw = true;
      }
      at = stop + 1;
    }
    return out;
  }

  /** The line being drawn, as a terminal shows it now ('' when none). */
  pending(): string {
    return this.line();
  }

  /** The end of the log: the line being drawn, ended ('' when none). */
  end(): string {
    const last = this.line();
    this.head = '';
    this.extra = 0;
    this.redraw = false;
    return last ? `${last}\n` : '';
  }

  private add(s: string): void {
    if (!s) return;
    if (this.redraw) {
      this.head = '';
      this.extra = 0;
      this.redraw = false;
    }
    const room = this.maxLine - this.head.length;
    if (s.length <= room) this.head += s;
    else {
      this.head += s.slice(0, room);
      this.extra += s.length - room;
    }
  }

  private line(): string {
    return this.extra ? `${this.head}… (${this.extra} more characters on this line)` : this.head;
  }
}

/** ANSI escapes and other controls out of a display line; hidden characters (bidi overrides, zero-width) as their marks. */
export function displayLine(s: string): string {
  return markHidden(s.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, ''));
}

/**
 * A job's log for a reader (the editor's output channel, `evotrainer job logs`): per array
 * task, lines as a terminal shows them (LogLines), each prefixed `[task] ` in an array job,
 * escapes dropped and hidden characters marked.
 */
export class JobLogView {
  private readonly tasks = new Map<string, LogLines>();

  constructor(
    private readonly array: boolean,
    private readonly maxLine = MAX_DISPLAY_LINE,
  ) {}

  /** The display text of the lines this chunk of one task's log ends. */
  write(task: string, text: string): string {
    return this.show(task, this.of(task).write(text));
  }

  /** The line a task is drawing now, for display ('' when none). */
  pending(task: string): string {
    const p = this.tasks.get(task)?.pending() ?? '';
    return p ? this.show(task, p) : '';
  }

  /** The end of the log: every task's last line, if it had no line end. */
  end(): string {
    return [...this.tasks].map(([task, l]) => this.show(task, l.end())).join('');
  }

  private of(task: string): LogLines {
    let l = this.tasks.get(task);
    if (!l) this.tasks.set(task, (l = new LogLines(this.maxLine)));
    return l;
  }

  private show(task: string, lines: string): string {
    if (!lines) return '';
    const text = displayLine(lines);
    return this.array ? text.replace(/^(?=.)/gm, `[${task}] `) : text;
  }
}
