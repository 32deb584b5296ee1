/** Hidden characters in untrusted text (see core/util/hidden): what the webviews use to make them visible. */
export { describeHidden, hasHidden, hiddenMark, markHidden, splitHidden, type HiddenPart } from '../core/util/hidden';
