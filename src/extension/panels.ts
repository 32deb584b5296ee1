// Panels that run the engine (the rollout store, diagnostics): a bundle of their own,
// required on first use so that activation never loads them.
export { HealthPanel } from './webviews/health/healthPanel';
export { ExplorerPanel } from './webviews/explorer/explorerPanel';
export { CurvesPanel } from './webviews/curves/curvesPanel';
export { liveCurves } from '../viewer/curves/live';
export { judgeRollouts, setLlmApiKey } from './commands/judge';
// Versions, lineage, skills: views' data, the version commands and their panels.
export { loadFindings, loadSkills, loadVersions, versionFile } from './views/data';
export { cherryPickSkill, compareVersions, importRollouts, initializeHarness, newVersionCommand, openVersionDiff, promoteCommand, recordSkillCommand, rejectCommand, showSkillEvidence } from './commands/versions';
export { LineagePanel } from './webviews/lineage/lineagePanel';
export { VersionPanel } from './webviews/version/versionPanel';
export { refreshVersionPanels } from './webviews/version/refresh';
// Jobs on clusters: the Runs view's records, launch choices, submit, cancel, logs, fetch.
export { cancelRun, failureText, fetchAndImport, followJob, jobRecord, launchChoices, launchJob, loadJobs, loginCommand, loginWorks, mergedProfiles, profileNamed, shownBefore, templatesAt, watchJob } from './jobs/engine';
// Backtests, the promotion gate and the evolve loop.
export { backtestThisChange, backtestVersionCommand, gateVersionCommand } from './backtest/commands';
export { answerPendingGateCommand, runEvolutionRound } from './evolve/commands';
