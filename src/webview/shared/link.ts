import { html, nothing, type TemplateResult } from 'lit';

/**
 * A link that acts on the page (opens a rollout, a diff): clickable, reachable with Tab and
 * activated with Enter as a button is.
 */
export function actionLink(o: { label: unknown; title: string; onActivate: () => void; testid?: string; className?: string }): TemplateResult {
  return html`<a class=${o.className ?? nothing} role="button" tabindex="0" data-testid=${o.testid ?? nothing} title=${o.title} @click=${o.onActivate} @keydown=${(e: KeyboardEvent) => e.key === 'Enter' && o.onActivate()}>${o.label}</a>`;
}
