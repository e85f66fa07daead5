/**
 * Short names for long keys that many lookups share (a subscription's
 * document and variables, the facts a live view is built from): the same
 * text gets the same name, so a key built from names is cheap to build and
 * hash once per subscriber and change. At most `max` texts are remembered;
 * past that all are forgotten and named afresh. A name is never given
 * twice, so a holder of a name from before only stops matching newer
 * holders of the same text: a cache keyed by names then misses, never
 * mixes two texts.
 */
export function interner(prefix: string, max = 10_000): (text: string) => string {
  const names = new Map<string, string>();
  let last = 0;
  return (text) => {
    let name = names.get(text);
    if (name === undefined) {
      if (names.size >= max) names.clear();
      names.set(text, (name = `${prefix}${++last}`));
    }
    return name;
  };
}
