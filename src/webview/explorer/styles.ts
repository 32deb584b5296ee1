import { css } from 'lit';

/**
 * The explorer's one stylesheet, in the app's shadow root: its parts (status line, filter bar,
 * rollout table, trajectory) render their elements there too (light DOM), so it styles them all.
 */
export const explorerStyles = css`
    :host { display: flex; flex-direction: column; height: 100vh; box-sizing: border-box; padding: 10px 16px 0; color: var(--vscode-foreground); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); }
    header { display: flex; align-items: center; gap: 12px; }
    h1 { font-size: 1.3em; font-weight: 600; margin: 0; }
    h2 { font-size: 1.05em; margin: 0; }
    .meta { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
    .grow { flex: 1; }
    .error { color: var(--vscode-errorForeground); }
    .hist { display: flex; flex-direction: column; gap: 2px; margin: 8px 0; max-width: 900px; }
    .hist button { all: unset; cursor: pointer; display: grid; grid-template-columns: 170px 1fr 70px; gap: 10px; align-items: center; }
    .hist .name { padding: 1px 4px; border-radius: 2px; }
    .hist .track { height: 12px; }
    .hist .bar { height: 12px; border-radius: 2px; background: var(--vscode-charts-blue, var(--vscode-focusBorder)); min-width: 2px; }
    .hist .bar.success { background: var(--vscode-charts-green, var(--vscode-testing-iconPassed)); }
    .hist .selected .name { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
    .hist .dim { opacity: 0.45; }
    .hist button:focus-visible .name { outline: 1px solid var(--vscode-focusBorder); }
    .toolbar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 4px 0 8px; }
    .toolbar vscode-textfield.search { width: 260px; }
    .toolbar vscode-textfield.step { width: 80px; }
    .toolbar vscode-single-select { width: 180px; }
    .main { flex: 1; display: flex; gap: 12px; min-height: 0; padding-bottom: 8px; }
    .table { flex: 1 1 45%; display: flex; flex-direction: column; min-width: 0; overflow: hidden; border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); }
    .cols { display: grid; grid-template-columns: 64px 90px 52px 140px 72px 64px 64px 64px minmax(120px, 1fr); }
    .compact .cols { grid-template-columns: 56px 130px 72px 64px minmax(80px, 1fr); }
    .table.compact .wide, .table.compact .thead .th.wide { display: none; }
    /* A narrow editor column: the compact columns, so that none is cut off, and an open trajectory under the table, not beside it. */
    @media (max-width: 720px) {
      .main { flex-direction: column; }
      .table { flex: 1 1 35%; }
      .traj { flex: 1 1 65%; }
      .cols { grid-template-columns: 56px 130px 72px 64px minmax(80px, 1fr); }
      .table .wide, .table .thead .th.wide { display: none; }
      .hist button { grid-template-columns: minmax(90px, 150px) 1fr 56px; }
    }
    .thead { font-weight: 600; border-bottom: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); background: var(--vscode-editorWidget-background); }
    .thead .th { all: unset; cursor: pointer; padding: 3px 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .thead .th:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
    .viewport { flex: 1; overflow-y: auto; overflow-x: hidden; position: relative; min-height: 120px; contain: strict; }
    .spacer { width: 1px; }
    .rows { position: absolute; left: 0; right: 0; top: 0; will-change: transform; }
    .row { height: 24px; line-height: 24px; cursor: pointer; contain: strict; }
    .row > span { padding: 0 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
    .row:hover { background: var(--vscode-list-hoverBackground); }
    .row:focus-visible { outline: 1px solid var(--vscode-list-focusOutline, var(--vscode-focusBorder)); outline-offset: -1px; }
    .row.open { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
    .row.placeholder { color: var(--vscode-descriptionForeground); }
    .num { text-align: right; font-variant-numeric: tabular-nums; }
    .ok { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
    .bad { color: var(--vscode-errorForeground); }
    .baseline { overflow: auto; flex: 1; }
    .traj { flex: 1 1 55%; overflow: auto; min-width: 0; border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); padding: 8px 10px; }
    .traj header { margin-bottom: 6px; }
    .facts { display: flex; flex-wrap: wrap; gap: 4px 14px; margin-bottom: 8px; }
    .msg { border-left: 3px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); margin: 8px 0; padding: 2px 0 2px 8px; }
    .msg.assistant { border-left-color: var(--vscode-charts-blue, var(--vscode-focusBorder)); }
    .msg.failed { border-left-color: var(--vscode-errorForeground); }
    /* The turn opened from a gate's answer-in-context row. */
    .msg.cited { border-left-color: var(--vscode-editorWarning-foreground, var(--vscode-focusBorder)); background: var(--vscode-editor-findMatchHighlightBackground, transparent); }
    .cited-mark { color: var(--vscode-editorWarning-foreground, inherit); font-weight: 600; }
    .turn-note { margin: 4px 0; }
    .msg-head { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; font-size: 0.9em; color: var(--vscode-descriptionForeground); }
    .role { font-weight: 600; color: var(--vscode-foreground); }
    .flag { color: var(--vscode-editorWarning-foreground); }
    pre { margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; font-family: var(--vscode-editor-font-family, monospace); font-size: var(--vscode-editor-font-size, 12px); }
    pre.cmd { background: var(--vscode-textCodeBlock-background, var(--vscode-editorWidget-background)); padding: 4px 6px; border-radius: 2px; }
    pre.text { max-height: 480px; overflow: auto; }
    .rc { font-variant-numeric: tabular-nums; }
    .diff { margin-top: 12px; }
    .diff pre { white-space: pre; overflow-x: auto; max-height: none; }
    .dl { display: block; min-height: 1.2em; }
    .dl.add { color: var(--vscode-gitDecoration-addedResourceForeground, var(--vscode-charts-green)); background: var(--vscode-diffEditor-insertedLineBackground, var(--vscode-diffEditor-insertedTextBackground)); }
    .dl.del { color: var(--vscode-gitDecoration-deletedResourceForeground, var(--vscode-errorForeground)); background: var(--vscode-diffEditor-removedLineBackground, var(--vscode-diffEditor-removedTextBackground)); }
    .dl.hunk { color: var(--vscode-charts-purple, var(--vscode-textLink-foreground)); }
    .dl.meta { color: var(--vscode-descriptionForeground); font-weight: 600; }
    /* "Show more (10.4 M characters left of …)" wraps in a narrow pane rather than overflow it. */
    vscode-button.more { max-width: 100%; }
    vscode-button.more::part(base) { white-space: normal; height: auto; }
    .ansi-bold { font-weight: 700; } .ansi-dim { opacity: 0.7; } .ansi-italic { font-style: italic; } .ansi-underline { text-decoration: underline; }
    .ansi-fg-0 { color: var(--vscode-terminal-ansiBlack); } .ansi-fg-1 { color: var(--vscode-terminal-ansiRed); } .ansi-fg-2 { color: var(--vscode-terminal-ansiGreen); } .ansi-fg-3 { color: var(--vscode-terminal-ansiYellow); }
    .ansi-fg-4 { color: var(--vscode-terminal-ansiBlue); } .ansi-fg-5 { color: var(--vscode-terminal-ansiMagenta); } .ansi-fg-6 { color: var(--vscode-terminal-ansiCyan); } .ansi-fg-7 { color: var(--vscode-terminal-ansiWhite); }
    .ansi-fg-8 { color: var(--vscode-terminal-ansiBrightBlack); } .ansi-fg-9 { color: var(--vscode-terminal-ansiBrightRed); } .ansi-fg-10 { color: var(--vscode-terminal-ansiBrightGreen); } .ansi-fg-11 { color: var(--vscode-terminal-ansiBrightYellow); }
    .ansi-fg-12 { color: var(--vscode-terminal-ansiBrightBlue); } .ansi-fg-13 { color: var(--vscode-terminal-ansiBrightMagenta); } .ansi-fg-14 { color: var(--vscode-terminal-ansiBrightCyan); } .ansi-fg-15 { color: var(--vscode-terminal-ansiBrightWhite); }
    .ansi-bg-0 { background: var(--vscode-terminal-ansiBlack); } .ansi-bg-1 { background: var(--vscode-terminal-ansiRed); } .ansi-bg-2 { background: var(--vscode-terminal-ansiGreen); } .ansi-bg-3 { background: var(--vscode-terminal-ansiYellow); }
    .ansi-bg-4 { background: var(--vscode-terminal-ansiBlue); } .ansi-bg-5 { background: var(--vscode-terminal-ansiMagenta); } .ansi-bg-6 { background: var(--vscode-terminal-ansiCyan); } .ansi-bg-7 { background: var(--vscode-terminal-ansiWhite); }
    .ansi-bg-8, .ansi-bg-9, .ansi-bg-10, .ansi-bg-11, .ansi-bg-12, .ansi-bg-13, .ansi-bg-14, .ansi-bg-15 { background: var(--vscode-terminal-ansiBrightBlack); }
    evo-explorer-status, evo-explorer-filters, evo-rollout-table, evo-trajectory-view { display: contents; }
`;
