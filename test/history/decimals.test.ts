import test from 'ava';
import {
  addDecimals,
  compareDecimals,
  decimalText,
  decimalValue,
  exactDecimal,
} from '../../src/core/history/values.ts';

const d = (v: unknown) => {
  const x = exactDecimal(v);
  if (x === null) throw new Error(`${JSON.stringify(v)} is not a decimal`);
  return x;
};

test('a double is taken as the decimal its shortest form writes; integers and #bigdec exactly', (t) => {
  t.is(decimalText(d(0.1)), '0.1');
  t.is(decimalText(d(-12.5)), '-12.5');
  t.is(decimalText(d(1e-7)), '0.0000001');
  t.is(decimalText(d(1.5e21)), '1500000000000000000000');
  t.is(decimalText(d({ '#bigint': '123456789012345678901234567890' })), '123456789012345678901234567890');
  t.is(decimalText(d({ '#bigdec': '10.50' })), '10.5');
  t.is(decimalText(d({ '#bigdec': '1.5E+3M' })), '1500');
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, '0.1', null, { '#bigdec': 'ten' }, [1]])
    t.is(exactDecimal(bad), null, JSON.stringify(bad));
});

test('sums are exact where doubles round: 0.1 + 0.2 is 0.3', (t) => {
  t.not(0.1 + 0.2, 0.3);
  t.is(compareDecimals(addDecimals(d(0.1), d(0.2)), d(0.3)), 0);
  t.true(compareDecimals(d(0.29), d(0.3)) < 0);
  t.true(compareDecimals(d(-0.01), d(0)) < 0);
  t.is(decimalText(addDecimals(d(0.1), d(-0.1))), '0');
});

test('a #bigdec with an exponent no history needs is refused, not expanded', (t) => {
  // A stranger's history must not make a sum build a number of a billion digits.
  t.is(exactDecimal({ '#bigdec': '1E-999999999' }), null);
  t.is(exactDecimal({ '#bigdec': '1E+999999999' }), null);
  t.is(exactDecimal({ '#bigdec': `0.${'1'.repeat(401)}` }), null);
  t.not(exactDecimal({ '#bigdec': '1E-400' }), null);
});

test('as JSON: a number when the double reads back as the decimal, else #bigdec; integers as integerValue', (t) => {
  t.is(decimalValue(d(0.3)), 0.3);
  t.is(decimalValue(addDecimals(d(0.1), d(0.2))), 0.3);
  t.deepEqual(decimalValue(d({ '#bigdec': '0.12345678901234567890123' })), {
    '#bigdec': '0.12345678901234567890123',
  });
  t.is(decimalValue(d(20)), 20);
  t.deepEqual(decimalValue(d({ '#bigint': '123456789012345678901234567890' })), {
    '#bigint': '123456789012345678901234567890',
  });
});
