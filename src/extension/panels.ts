// The engine bundle: the features' host code that runs the engine (the rollout store, git,
// diagnostics), required on first use so that activation never loads it.
export { defaultStorePath } from '../core/store/store';
// Webview features, each loaded by its descriptor (src/extension/*/webview*.ts) on first open.
export { healthFeature } from './webviews/health/healthPanel';
export { explorerFeature } from './webviews/explorer/explorerPanel';
export { lineageFeature } from './webviews/lineage/lineagePanel';
export { versionFeature } from './webviews/version/versionPanel';
export { resultFeature } from './webviews/backtest/resultPanel';
export { curvesFeature } from './webviews/curves/curvesPanel';
export { liveCurves } from '../viewer/curves/live';
export { judgeRollouts, setLlmApiKey } from './commands/judge';
// Versions, lineage, skills: views' data, the version commands and their panels.
export { loadFindings, loadSkills, loadVersions, versionFile } from './views/data';
export { cherryPickSkill, compareVersions, importRollouts, initializeHarness, newVersionCommand, openVersionDiff, promoteCommand, recordSkillCommand, rejectCommand, showSkillEvidence } from './commands/versions';
// Jobs on clusters: the Runs view's records, launch choices, submit, cancel, logs, fetch.
export { cancelRun, failureText, fetchAndImport, followJob, jobRecord, launchChoices, launchJob, loadJobs, loginCommand, loginWorks, mergedProfiles, profileNamed, shownBefore, templatesAt, watchJob } from './jobs/engine';
// Backtests, the promotion gate and the evolve loop.
export { backtestThisChange, backtestVersionCommand, gateVersionCommand } from './backtest/commands';
export { answerPendingGateCommand, runEvolutionRound } from './evolve/commands';
