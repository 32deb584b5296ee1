import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unsupportedPlatform } from '../../src/extension/platform';

describe('the platforms the extension activates on', () => {
  it('Linux and macOS (the platform packages) activate; Windows is refused, naming Remote-SSH and WSL', () => {
    assert.equal(unsupportedPlatform('linux'), null);
    assert.equal(unsupportedPlatform('darwin'), null);
    assert.match(unsupportedPlatform('win32') ?? '', /runs on Linux and macOS hosts.*Remote-SSH \(or in WSL\)/);
  });
});
