export { LabError } from './lab-error.js';
export { KUBERNETES_VERSION, KWOK_VERSION, LAB_BINARIES, findBinaries, isExecutable, missingBinariesMessage, type FindBinariesOptions, type FoundBinaries, type LabBinaries, type LabBinary } from './binaries.js';
export { buildBinaries, findGo, versionLdflags, wrapperGoMod } from './build-binaries.js';
export { LAB_CLUSTER, LAB_NAMESPACE, defaultLabDir, readState, type LabState } from './lab-state.js';
export { labUp, type LabUpOptions } from './lab-up.js';
export { labDown, type LabDownResult } from './lab-down.js';
export { isRunning, type LabProcess } from './processes.js';
export { FAIL_LABEL, KWOK_COMPONENT, SIMULATED_REASONS, kwokStagesYaml } from './kwok-stages.js';
