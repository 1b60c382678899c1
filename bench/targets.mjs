// Targets for Gatehouse, always as ratios against peers measured in the same run (never absolute numbers),
// plus a memory ceiling. Checked and printed by run.mjs; a miss prints MISSED but does not fail the run.
export const throughputTargets = [
  { scenario: '1k', peer: 'node-ceiling', min: 0.9 },
  { scenario: '1k', peer: 'sirv', min: 3 },
  { scenario: '304', peer: 'node-ceiling', min: 1.0 },
  { scenario: '150k', peer: 'sirv', min: 2 },
];

export const rssTargetMb = 120;
