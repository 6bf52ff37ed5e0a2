/** How a step's console lines name the changes of the configured mode (edits, suggestions, candidates). */
import { PAYLOAD } from '../../protocol/optimizer.ts';
import { count } from '../../util/plural.ts';
import type { TrainSettings } from '../settings.ts';

type Mode = TrainSettings['mode'];

/** The plural noun of the mode's changes. */
export const changesLabel = (mode: Mode): string => PAYLOAD[mode].label;

/** `n` changes, with the noun in the right number. */
export const ofChanges = (mode: Mode, n: number): string => {
  const label = changesLabel(mode);
  return count(n, label.replace(/s$/, ''), label);
};
