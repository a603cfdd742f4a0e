import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextStep } from './search-histogram.js';

void describe('nextStep', () => {
  void it('narrows the seconds a counting statement covers to about 8,192 hits at the rate the last one saw, down to one second', () => {
    assert.equal(nextStep(3600, 81_920, 3600), 360);
    assert.equal(nextStep(3600, 8_192, 100), 100, 'the seconds the last statement covered, when it was cut short by the window');
    assert.equal(nextStep(10, 1_000_000, 1), 1);
  });

  void it('widens it at most fourfold a statement where hits are sparse', () => {
    assert.equal(nextStep(60, 0, 60), 240);
    assert.equal(nextStep(60, 4_096, 60), 120);
    assert.equal(nextStep(86_400 * 366, 0, 86_400 * 366), 86_400 * 366);
  });
});
