import { describe, expect, it } from 'vitest';
import { interner } from '../../services/kernel/interner.js';

describe('interner', () => {
  it('names the same text alike and other texts apart', () => {
    const name = interner('d');
    const a = name('subscription { capacityChanged(refs: ["a"]) { scope } }');
    expect(name('subscription { capacityChanged(refs: ["a"]) { scope } }')).toBe(a);
    expect(name('subscription { capacityChanged(refs: ["b"]) { scope } }')).not.toBe(a);
    expect(a).toMatch(/^d\d+$/);
  });

  it('forgets past its bound and never gives a name twice', () => {
    const name = interner('s', 2);
    const first = name('one');
    name('two');
    // The third text fills the bound: everything is forgotten, and "one" gets a new name, not one given before.
    const third = name('three');
    const again = name('one');
    expect(new Set([first, third, again]).size).toBe(3);
    expect(name('one')).toBe(again);
  });
});
