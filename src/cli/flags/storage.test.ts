import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageFlagValue } from './storage.js';

void describe('storageFlagValue', () => {
  void it('takes --storage, else its older name, else the default', () => {
    assert.equal(storageFlagValue('sqlite:a.db', { flag: '--from', value: undefined }, 'sqlite:d.db'), 'sqlite:a.db');
    assert.equal(storageFlagValue(undefined, { flag: '--from', value: 'sqlite:b.db' }, 'sqlite:d.db'), 'sqlite:b.db');
    assert.equal(storageFlagValue(undefined, { flag: '--from', value: undefined }, 'sqlite:d.db'), 'sqlite:d.db');
    assert.equal(storageFlagValue('', { flag: '--from', value: '' }, 'sqlite:d.db'), 'sqlite:d.db', 'an empty value is not given');
  });

  void it('refuses both names, and neither where there is no default', () => {
    assert.throws(() => storageFlagValue('memory:', { flag: '--to', value: 'memory:' }), /--storage and --to name the same archive/);
    assert.throws(() => storageFlagValue(undefined, { flag: '--to', value: undefined }), /required option '--storage <spec>' not specified/);
  });
});
