import test from 'ava';
import fc from 'fast-check';
import { groupThousands } from '../../src/core/util/format.ts';

test('groupThousands prints what toLocaleString("en-US") prints for integers', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: -(2 ** 53), max: 2 ** 53 }), (n) => {
      const expected = n === 0 ? '0' : n.toLocaleString('en-US');
      return groupThousands(n) === expected;
    }),
  );
  t.is(groupThousands(4217), '4,217');
  t.is(groupThousands(1_000_000), '1,000,000');
});

test('groupThousands keeps at most three fraction digits', (t) => {
  t.is(groupThousands(1234.5678), '1,234.568');
  t.is(groupThousands(-1234.5), '-1,234.5');
  t.is(groupThousands(0.1 + 0.2), '0.3');
  t.is(groupThousands(999.9999), '1,000');
  t.is(groupThousands(Number.POSITIVE_INFINITY), '∞');
});
