"use strict";
// The inspector's palette and its light/dark theme. One palette, written once, serves both
// the page (set on :root as custom properties, which app.css and apps.js use) and the MCP
// Apps views (hostContext.styles.variables: the spec's standard names, 2026-01-26 "Theming").
// Each colour is a CSS light-dark() pair, so the same values hold in both themes: what picks
// one is the color-scheme in force (the page's, from the toggle; a view's, from
// hostContext.theme). The theme follows prefers-color-scheme until the toggle in the page's
// header pins it; a change is announced to subscribers (apps.js: host-context-changed).
const mcpkitTheme = (function () {
  const ld = (light, dark) => "light-dark(" + light + ", " + dark + ")";
  const SANS = '"mcpkit sans", system-ui, sans-serif';
  const MONO = '"mcpkit mono", ui-monospace, monospace';
  // The spec's standard variables (McpUiStyleVariableKey), every one given.
  const VARIABLES = {
    "--color-background-primary": ld("#ffffff", "#1b1f24"),
    "--color-background-secondary": ld("#f6f7f9", "#13161a"),
    "--color-background-tertiary": ld("#e4e7ec", "#262b32"),
    "--color-background-inverse": ld("#1d232a", "#e6e9ee"),
    "--color-background-ghost": ld("rgba(255, 255, 255, 0)", "rgba(27, 31, 36, 0)"),
    "--color-background-info": ld("#e8eefb", "#1d2c4d"),
    "--color-background-danger": ld("#fdecea", "#4a1f1b"),
    "--color-background-success": ld("#e7f4ea", "#163523"),
    "--color-background-warning": ld("#fff4e5", "#402e10"),
    "--color-background-disabled": ld("#eef0f3", "#22262c"),
    "--color-text-primary": ld("#1d232a", "#e6e9ee"),
    "--color-text-secondary": ld("#5b6573", "#a9b2be"),
    "--color-text-tertiary": ld("#6b7480", "#8f99a6"),
    "--color-text-inverse": ld("#ffffff", "#13161a"),
    "--color-text-ghost": ld("rgba(91, 101, 115, 0.6)", "rgba(169, 178, 190, 0.6)"),
    "--color-text-info": ld("#2d56b8", "#8ab0ff"),
    "--color-text-danger": ld("#b03a2e", "#ff8a80"),
    "--color-text-success": ld("#1e6b35", "#7fd49a"),
    "--color-text-warning": ld("#8a5300", "#f2c14e"),
    "--color-text-disabled": ld("#8d95a1", "#6c7581"),
    "--color-border-primary": ld("#d6dae1", "#3a414b"),
    "--color-border-secondary": ld("#e4e7ec", "#2e343c"),
    "--color-border-tertiary": ld("#eef0f3", "#262b32"),
    "--color-border-inverse": ld("#1d232a", "#e6e9ee"),
    "--color-border-ghost": ld("rgba(214, 218, 225, 0)", "rgba(58, 65, 75, 0)"),
    "--color-border-info": ld("#3867d6", "#8ab0ff"),
    "--color-border-danger": ld("#c0392b", "#ff8a80"),
    "--color-border-success": ld("#2e8b4a", "#7fd49a"),
    "--color-border-warning": ld("#e67e22", "#f2c14e"),
    "--color-border-disabled": ld("#e4e7ec", "#2e343c"),
    "--color-ring-primary": ld("#3867d6", "#8ab0ff"),
    "--color-ring-secondary": ld("#5b6573", "#a9b2be"),
    "--color-ring-inverse": ld("#ffffff", "#13161a"),
    "--color-ring-info": ld("#3867d6", "#8ab0ff"),
    "--color-ring-danger": ld("#c0392b", "#ff8a80"),
    "--color-ring-success": ld("#2e8b4a", "#7fd49a"),
    "--color-ring-warning": ld("#e67e22", "#f2c14e"),
    "--font-sans": SANS,
    "--font-mono": MONO,
    "--font-weight-normal": "400",
    "--font-weight-medium": "500",
    "--font-weight-semibold": "600",
    "--font-weight-bold": "700",
    "--font-text-xs-size": "11px",
    "--font-text-sm-size": "12px",
    "--font-text-md-size": "14px",
    "--font-text-lg-size": "16px",
    "--font-heading-xs-size": "12px",
    "--font-heading-sm-size": "14px",
    "--font-heading-md-size": "16px",
    "--font-heading-lg-size": "20px",
    "--font-heading-xl-size": "24px",
    "--font-heading-2xl-size": "28px",
    "--font-heading-3xl-size": "36px",
    "--font-text-xs-line-height": "1.4",
    "--font-text-sm-line-height": "1.4",
    "--font-text-md-line-height": "1.4",
    "--font-text-lg-line-height": "1.5",
    "--font-heading-xs-line-height": "1.3",
    "--font-heading-sm-line-height": "1.3",
    "--font-heading-md-line-height": "1.3",
    "--font-heading-lg-line-height": "1.25",
    "--font-heading-xl-line-height": "1.2",
    "--font-heading-2xl-line-height": "1.2",
    "--font-heading-3xl-line-height": "1.15",
    "--border-radius-xs": "2px",
    "--border-radius-sm": "3px",
    "--border-radius-md": "4px",
    "--border-radius-lg": "6px",
    "--border-radius-xl": "10px",
    "--border-radius-full": "9999px",
    "--border-width-regular": "1px",
    "--shadow-hairline": "0 0 0 1px " + ld("rgba(29, 35, 42, 0.08)", "rgba(0, 0, 0, 0.4)"),
    "--shadow-sm": "0 1px 2px " + ld("rgba(29, 35, 42, 0.12)", "rgba(0, 0, 0, 0.5)"),
    "--shadow-md": "0 2px 6px " + ld("rgba(29, 35, 42, 0.14)", "rgba(0, 0, 0, 0.5)"),
    "--shadow-lg": "0 6px 18px " + ld("rgba(29, 35, 42, 0.18)", "rgba(0, 0, 0, 0.55)"),
  };
  // The page's own header, dark in both themes (not a spec name: views are not given it).
  const PAGE = {
    "--mcpkit-header-background": ld("#1d232a", "#0b0d10"),
    "--mcpkit-header-text": ld("#ffffff", "#e6e9ee"),
  };
  // The fonts, the spec's way (styles.css.fonts: @font-face rules a view applies): names
  // for the fonts installed on the machine (local(), so nothing is fetched, which a view's
  // policy would refuse); where none is installed, the stacks fall back to system-ui.
  const FONTS =
    '@font-face{font-family:"mcpkit sans";src:local("Inter"),local("Segoe UI"),local("Roboto"),local("Helvetica Neue"),local("DejaVu Sans"),local("Arial")}' +
    '@font-face{font-family:"mcpkit mono";src:local("JetBrains Mono"),local("SF Mono"),local("Menlo"),local("Consolas"),local("DejaVu Sans Mono")}';
  const CHOICES = ["system", "light", "dark"];

  const media = window.matchMedia("(prefers-color-scheme: dark)");
  const listeners = [];
  let choice = "system";
  let current = null;

  function resolved() {
    return choice === "system" ? (media.matches ? "dark" : "light") : choice;
  }
  function apply() {
    const theme = resolved();
    if (theme === current) return;
    current = theme;
    document.documentElement.dataset.theme = theme;
    for (const listener of listeners) listener(theme);
  }

  const rules = Object.entries({ ...VARIABLES, ...PAGE }).map(([k, v]) => k + ":" + v).join(";");
  const sheet = document.createElement("style");
  sheet.textContent = FONTS + ":root{" + rules + "}";
  document.head.prepend(sheet);
  media.addEventListener("change", apply);
  apply();

  return {
    // The theme in force: "light" or "dark" (hostContext.theme).
    current() { return current; },
    // hostContext.styles: the standard variables and the fonts.
    styles() { return { variables: { ...VARIABLES }, css: { fonts: FONTS } }; },
    // "system" (follow prefers-color-scheme), "light" or "dark": from the page's toggle.
    choose(value) {
      if (!CHOICES.includes(value)) return;
      choice = value;
      apply();
    },
    // listener(theme) after each change of the theme in force.
    subscribe(listener) { listeners.push(listener); },
  };
})();
