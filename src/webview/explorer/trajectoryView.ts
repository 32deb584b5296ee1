import { html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { MoreTextRequest, turnMessages, type TextChunk, type TextPart, type Trajectory, type TrajectoryMessage } from '../../viewer/explorer/protocol';
import { ansiSegments, diffLines, formatChars, modeLabel as label, plainView, type Segment } from './text';
import { shown } from '../shared/hidden';
import './tokenStrip';
import { host } from '../shared/app';
import { ExplorerPart } from './part';

/** Styled segments of untrusted text: ANSI classes, and each hidden character's mark with its name as the tooltip. */
function segmentsView(segments: Segment[]) {
  return segments.map((s) => (s.title ? html`<span class=${s.classes} title=${s.title}>${s.text}</span>` : s.classes ? html`<span class=${s.classes}>${s.text}</span>` : s.text));
}

function partKey(p: TextPart): string {
  return p.kind === 'message' ? `message:${p.index}` : p.kind;
}

/**
 * Texts grown by "Show more" and their parsed ANSI segments, kept by the app for the page's
 * life (a trajectory opened again shows what was already fetched).
 */
export class GrownTexts {
  /** Key `${id}|${part}`. */
  readonly chunks = new Map<string, TextChunk>();
  readonly segments = new Map<string, { end: number; segments: Segment[] }>();
}

/**
 * One rollout's trajectory: its facts, every message (command, exit code, flags, text with
 * ANSI colours, the per-token heat strips of its model calls), the answer, the ground truth
 * and the submitted diff. Long texts come in chunks: "Show more" fetches the next one.
 */
@customElement('evo-trajectory-view')
export class TrajectoryView extends ExplorerPart {
  @property({ attribute: false }) trajectory: Trajectory | null = null;
  /** An agent turn to show: its messages are marked, and the first is scrolled into view once. */
  @property({ attribute: false }) turn: number | null = null;
  @property({ attribute: false }) error: string | null = null;
  @property({ attribute: false }) texts = new GrownTexts();
  @property({ attribute: false }) onClose: () => void = () => {};
  /** Bumped when a "show more" page arrives. */
  @state() private grownVersion = 0;

  /** The messages of `turn` in the open trajectory. */
  private cited(): number[] {
    return this.trajectory && this.turn !== null ? turnMessages(this.trajectory.messages, this.turn) : [];
  }

  protected override updated(changed: Map<string, unknown>): void {
    if (!changed.has('trajectory') && !changed.has('turn')) return;
    const first = this.cited()[0];
    if (first === undefined) return;
    this.querySelector(`[data-testid="msg-${first}"]`)?.scrollIntoView({ block: 'start' });
  }

  override render() {
    const t = this.trajectory;
    if (!t) {
      return html`<div class="traj" data-testid="trajectory">${this.error ? html`<p class="error">${shown(this.error)}</p>` : html`<vscode-progress-ring aria-label="Loading the trajectory"></vscode-progress-ring>`}</div>`;
    }
    const cited = new Set(this.cited());
    return html`<div class="traj" data-testid="trajectory" data-rollout=${t.id}>
      <header>
        <h2>Rollout ${t.id} · ${plainView(t.prompt_id)}</h2>
        <span class="grow"></span>
        <vscode-button secondary icon="close" data-testid="trajectory-close" @click=${() => this.onClose()}>Close</vscode-button>
      </header>
      <div class="facts meta">
        <span>run ${plainView(t.run_id)}${t.version ? html` · version ${plainView(t.version)}` : ''} · step ${t.step} · ${shown(t.split)}</span>
        <span data-testid="trajectory-mode">failure mode: <b>${label(t.failure_mode)}</b></span>
        <span>reward ${t.reward ?? '—'}</span>
        <span class=${t.correct ? 'ok' : t.correct === false ? 'bad' : ''}>${t.correct === null ? 'no verdict' : t.correct ? 'correct' : 'incorrect'}</span>
        <span>${t.num_turns ?? '—'} turns</span>
        <span>stop: ${t.stop_reason === null ? '—' : plainView(t.stop_reason)}</span>
        <span>source ${plainView(t.raw_ref)}</span>
      </div>
      ${this.turnNote(t, cited.size > 0)}
      ${t.messages.map((m) => this.messageView(t, m, cited.has(m.index)))}
      ${t.tokens.some((k) => k.messageIndex === null)
        ? html`<div class="msg" data-testid="tokens-unplaced"><div class="msg-head"><span class="role">Tokens of model calls with no message shown</span></div>
            ${t.tokens.filter((k) => k.messageIndex === null).map((k) => html`<div class="meta">call ${k.turn + 1}</div><evo-token-strip .strip=${k}></evo-token-strip>`)}</div>`
        : nothing}
      ${t.answer ? this.textBlock(t, 'answer', { kind: 'answer' }, 'Answer') : nothing}
      ${t.groundTruth ? this.textBlock(t, 'ground-truth', { kind: 'groundTruth' }, 'Ground truth') : nothing}
      ${t.diff ? this.diffView() : nothing}
    </div>`;
  }

  private baseChunk(part: TextPart): TextChunk | null {
    const t = this.trajectory;
    if (!t) return null;
    if (part.kind === 'message') return t.messages[part.index]?.content ?? null;
    return t[part.kind];
  }

  private textOf(part: TextPart): TextChunk | null {
    if (!this.trajectory) return null;
    return this.texts.chunks.get(`${this.trajectory.id}|${partKey(part)}`) ?? this.baseChunk(part);
  }

  private segments(key: string, c: TextChunk): Segment[] {
    const hit = this.texts.segments.get(key);
    if (hit && hit.end === c.end) return hit.segments;
    const segments = ansiSegments(c.text);
    this.texts.segments.set(key, { end: c.end, segments });
    return segments;
  }

  private more(part: TextPart): void {
    const c = this.textOf(part);
    if (!c || !this.trajectory) return;
    const id = this.trajectory.id;
    host.request(MoreTextRequest, { id, part, offset: c.end }).then(
      (chunk) => {
        if (id !== this.trajectory?.id) return;
        const key = `${id}|${partKey(part)}`;
        const prev = this.texts.chunks.get(key) ?? this.baseChunk(part);
        if (!prev || prev.end !== chunk.end - chunk.text.length) return;
        this.texts.chunks.set(key, { text: prev.text + chunk.text, length: chunk.length, end: chunk.end });
        this.grownVersion++;
      },
      (err: Error) => console.error(`more text of rollout ${id}: ${err.message}`),
    );
  }

  /** Which turn is shown, or that the trajectory has no such turn (a re-import may have changed it). */
  private turnNote(t: Trajectory, found: boolean) {
    if (this.turn === null) return nothing;
    const which = this.turn === 0 ? 'what the environment said before turn 1' : `turn ${this.turn}`;
    return found
      ? html`<p class="turn-note" data-testid="turn-note">Showing ${which}: the output that held the answer is marked.</p>`
      : html`<p class="turn-note" data-testid="turn-note">Rollout ${t.id} has no ${which}.</p>`;
  }

  private messageView(t: Trajectory, m: TrajectoryMessage, cited: boolean) {
    const failed = m.exitCode !== null && m.exitCode !== 0;
    const flags = [m.formatError && 'format error', m.timeout && 'timeout', m.truncated && 'output truncated'].filter(Boolean);
    return html`<div class="msg ${m.role === 'assistant' ? 'assistant' : ''} ${failed || m.formatError || m.timeout ? 'failed' : ''} ${cited ? 'cited' : ''}" data-testid="msg-${m.index}">
      <div class="msg-head">
        <span class="role">${plainView(m.role)}</span><span>#${m.index}</span>${m.part === 'prompt' ? html`<span>prompt</span>` : nothing}
        ${cited ? html`<span class="cited-mark" data-testid="cited-${m.index}">turn ${this.turn === 0 ? 'before 1' : this.turn}</span>` : nothing}
        ${m.actionKind && m.actionKind !== 'message' && m.actionKind !== 'observation' ? html`<span>${plainView(m.actionKind)}</span>` : nothing}
        ${m.exitCode !== null ? html`<span class="rc ${failed ? 'bad' : 'ok'}" data-testid="rc-${m.index}">exit ${m.exitCode}</span>` : nothing}
        ${flags.map((f) => html`<span class="flag">${f}</span>`)}
      </div>
      ${m.command ? html`<pre class="cmd" data-testid="cmd-${m.index}">$ ${segmentsView(ansiSegments(m.command))}</pre>` : nothing}
      ${this.textBody(`${t.id}|message:${m.index}`, { kind: 'message', index: m.index }, `text-${m.index}`)}
      ${t.tokens.filter((k) => k.messageIndex === m.index).map((k) => html`<evo-token-strip .strip=${k}></evo-token-strip>`)}
    </div>`;
  }

  private textBody(key: string, part: TextPart, testid: string) {
    const c = this.textOf(part);
    if (!c) return nothing;
    const left = c.length - c.end;
    return html`<pre class="text" data-testid=${testid}>${segmentsView(this.segments(key, c))}</pre>
      ${left > 0 ? html`<vscode-button secondary class="more" data-testid="more-${testid}" @click=${() => this.more(part)}>Show more (${formatChars(left)} left of ${formatChars(c.length)})</vscode-button>` : nothing}`;
  }

  private textBlock(t: Trajectory, testid: string, part: TextPart, title: string) {
    return html`<div class="msg" data-testid=${testid}><div class="msg-head"><span class="role">${title}</span></div>${this.textBody(`${t.id}|${partKey(part)}`, part, `text-${testid}`)}</div>`;
  }

  private diffView() {
    const c = this.textOf({ kind: 'diff' })!;
    const left = c.length - c.end;
    return html`<div class="diff" data-testid="diff">
      <h2>Submitted diff</h2>
      <pre>${diffLines(c.text).map((l) => html`<span class="dl ${l.kind}">${l.text ? shown(l.text) : ' '}</span>`)}</pre>
      ${left > 0 ? html`<vscode-button secondary class="more" data-testid="more-diff" @click=${() => this.more({ kind: 'diff' })}>Show more (${formatChars(left)} left)</vscode-button>` : nothing}
    </div>`;
  }
}
