import { noChange, nothing } from 'lit';
import { Directive, directive, PartType, type ElementPart, type PartInfo } from 'lit/directive.js';

type Props = Record<string, string>;

/**
 * Inline CSS properties set through the CSSOM (`element.style.setProperty`), on the first
 * render too. The webviews' CSP has no 'unsafe-inline' for styles, so a `style` attribute in
 * markup, which lit's `styleMap` writes on first render, is refused: the element paints
 * without it (every histogram bar full width) and the console logs a violation.
 * Use on an element: `<div ${cssProps({ width: '40%' })}>`.
 */
class CssProps extends Directive {
  private keys: string[] = [];

  constructor(part: PartInfo) {
    super(part);
    if (part.type !== PartType.ELEMENT) throw new Error('cssProps goes in an element tag: <div ${cssProps({...})}>');
  }

  render(_props: Props): unknown {
    return nothing;
  }

  override update(part: ElementPart, [props]: [Props]): unknown {
    const style = (part.element as HTMLElement).style;
    for (const k of this.keys) if (!(k in props)) style.removeProperty(k);
    for (const [k, v] of Object.entries(props)) style.setProperty(k, v);
    this.keys = Object.keys(props);
    return noChange;
  }
}

export const cssProps = directive(CssProps);
