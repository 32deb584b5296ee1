/**
 * The --vscode-* colours the explorer and the curves style themselves with, outside the editor: VS Code's
 * Dark Modern and Light Modern values, chosen by the browser's colour scheme.
 */
export const THEME_CSS = `
:root {
  --vscode-font-family: system-ui, -apple-system, "Segoe UI", Ubuntu, sans-serif; --vscode-font-size: 13px; --vscode-font-weight: normal;
  --vscode-editor-font-family: ui-monospace, "Cascadia Mono", "DejaVu Sans Mono", monospace; --vscode-editor-font-size: 12px;
  --vscode-editor-background: #1f1f1f; --vscode-foreground: #cccccc; --vscode-descriptionForeground: #9d9d9d; --vscode-errorForeground: #f85149;
  --vscode-editorWarning-foreground: #cca700; --vscode-focusBorder: #0078d4; --vscode-panel-border: #2b2b2b; --vscode-widget-border: #313131;
  --vscode-editorWidget-background: #202020; --vscode-textCodeBlock-background: #2b2b2b; --vscode-textLink-foreground: #4daafc; --vscode-textLink-activeForeground: #4daafc;
  --vscode-list-hoverBackground: #2a2d2e; --vscode-list-activeSelectionBackground: #04395e; --vscode-list-activeSelectionForeground: #ffffff;
  --vscode-charts-blue: #3794ff; --vscode-charts-green: #89d185; --vscode-charts-purple: #b180d7; --vscode-testing-iconPassed: #73c991;
  --vscode-charts-orange: #d18616; --vscode-charts-red: #f14c4c; --vscode-charts-yellow: #cca700; --vscode-charts-foreground: #cccccc;
  --vscode-checkbox-background: #313131; --vscode-checkbox-border: #3c3c3c; --vscode-checkbox-foreground: #cccccc; --vscode-editorWidget-border: #454545;
  --vscode-gitDecoration-addedResourceForeground: #81b88b; --vscode-gitDecoration-deletedResourceForeground: #c74e39;
  --vscode-diffEditor-insertedLineBackground: rgba(155, 185, 85, 0.2); --vscode-diffEditor-removedLineBackground: rgba(255, 0, 0, 0.2);
  --vscode-button-background: #0078d4; --vscode-button-foreground: #ffffff; --vscode-button-hoverBackground: #026ec1;
  --vscode-button-secondaryBackground: #313131; --vscode-button-secondaryForeground: #cccccc; --vscode-button-secondaryHoverBackground: #3c3c3c;
  --vscode-input-background: #313131; --vscode-input-foreground: #cccccc; --vscode-input-border: #3c3c3c; --vscode-input-placeholderForeground: #989898;
  --vscode-dropdown-background: #313131; --vscode-dropdown-foreground: #cccccc; --vscode-dropdown-border: #3c3c3c; --vscode-settings-dropdownListBorder: #454545;
  --vscode-badge-background: #616161; --vscode-badge-foreground: #f8f8f8; --vscode-progressBar-background: #0078d4;
  --vscode-settings-textInputBackground: #313131; --vscode-settings-textInputForeground: #cccccc; --vscode-settings-textInputBorder: #3c3c3c;
  --vscode-settings-dropdownBackground: #313131; --vscode-settings-dropdownForeground: #cccccc; --vscode-settings-dropdownBorder: #3c3c3c;
  --vscode-widget-shadow: rgba(0, 0, 0, 0.36); --vscode-list-focusOutline: #0078d4; --vscode-list-highlightForeground: #2aaaff;
  --vscode-terminal-ansiBlack: #000000; --vscode-terminal-ansiRed: #cd3131; --vscode-terminal-ansiGreen: #0dbc79; --vscode-terminal-ansiYellow: #e5e510;
  --vscode-terminal-ansiBlue: #2472c8; --vscode-terminal-ansiMagenta: #bc3fbc; --vscode-terminal-ansiCyan: #11a8cd; --vscode-terminal-ansiWhite: #e5e5e5;
  --vscode-terminal-ansiBrightBlack: #666666; --vscode-terminal-ansiBrightRed: #f14c4c; --vscode-terminal-ansiBrightGreen: #23d18b; --vscode-terminal-ansiBrightYellow: #f5f543;
  --vscode-terminal-ansiBrightBlue: #3b8eea; --vscode-terminal-ansiBrightMagenta: #d670d6; --vscode-terminal-ansiBrightCyan: #29b8db; --vscode-terminal-ansiBrightWhite: #e5e5e5;
  color-scheme: dark;
}
@media (prefers-color-scheme: light) {
  :root {
    --vscode-editor-background: #ffffff; --vscode-foreground: #3b3b3b; --vscode-descriptionForeground: #717171; --vscode-errorForeground: #f85149;
    --vscode-editorWarning-foreground: #bf8803; --vscode-focusBorder: #005fb8; --vscode-panel-border: #e5e5e5; --vscode-widget-border: #e5e5e5;
    --vscode-editorWidget-background: #f8f8f8; --vscode-textCodeBlock-background: #f0f0f0; --vscode-textLink-foreground: #005fb8; --vscode-textLink-activeForeground: #005fb8;
    --vscode-list-hoverBackground: #f2f2f2; --vscode-list-activeSelectionBackground: #e8e8e8; --vscode-list-activeSelectionForeground: #000000;
    --vscode-charts-blue: #1a85ff; --vscode-charts-green: #388a34; --vscode-charts-purple: #652d90; --vscode-testing-iconPassed: #388a34;
    --vscode-charts-orange: #d18616; --vscode-charts-red: #e51400; --vscode-charts-yellow: #bf8803; --vscode-charts-foreground: #616161;
    --vscode-checkbox-background: #f8f8f8; --vscode-checkbox-border: #cecece; --vscode-checkbox-foreground: #3b3b3b; --vscode-editorWidget-border: #c8c8c8;
    --vscode-gitDecoration-addedResourceForeground: #587c0c; --vscode-gitDecoration-deletedResourceForeground: #ad0707;
    --vscode-diffEditor-insertedLineBackground: rgba(155, 185, 85, 0.2); --vscode-diffEditor-removedLineBackground: rgba(255, 0, 0, 0.2);
    --vscode-button-secondaryBackground: #e5e5e5; --vscode-button-secondaryForeground: #3b3b3b; --vscode-button-secondaryHoverBackground: #cccccc;
    --vscode-input-background: #ffffff; --vscode-input-foreground: #3b3b3b; --vscode-input-border: #cecece; --vscode-input-placeholderForeground: #767676;
    --vscode-dropdown-background: #ffffff; --vscode-dropdown-foreground: #3b3b3b; --vscode-dropdown-border: #cecece; --vscode-settings-dropdownListBorder: #cecece;
    --vscode-badge-background: #cccccc; --vscode-badge-foreground: #3b3b3b;
    --vscode-settings-textInputBackground: #ffffff; --vscode-settings-textInputForeground: #3b3b3b; --vscode-settings-textInputBorder: #cecece;
    --vscode-settings-dropdownBackground: #ffffff; --vscode-settings-dropdownForeground: #3b3b3b; --vscode-settings-dropdownBorder: #cecece;
    --vscode-widget-shadow: rgba(0, 0, 0, 0.16); --vscode-list-focusOutline: #005fb8; --vscode-list-highlightForeground: #0066bf;
    --vscode-terminal-ansiBlack: #000000; --vscode-terminal-ansiRed: #cd3131; --vscode-terminal-ansiGreen: #107c10; --vscode-terminal-ansiYellow: #949800;
    --vscode-terminal-ansiBlue: #0451a5; --vscode-terminal-ansiMagenta: #bc05bc; --vscode-terminal-ansiCyan: #0598bc; --vscode-terminal-ansiWhite: #555555;
    --vscode-terminal-ansiBrightBlack: #666666; --vscode-terminal-ansiBrightRed: #cd3131; --vscode-terminal-ansiBrightGreen: #14ce14; --vscode-terminal-ansiBrightYellow: #b5ba00;
    --vscode-terminal-ansiBrightBlue: #0451a5; --vscode-terminal-ansiBrightMagenta: #bc05bc; --vscode-terminal-ansiBrightCyan: #0598bc; --vscode-terminal-ansiBrightWhite: #a5a5a5;
    color-scheme: light;
  }
}
`;
