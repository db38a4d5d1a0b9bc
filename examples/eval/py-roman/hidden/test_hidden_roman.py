import unittest

from roman import to_roman


class HiddenRomanTest(unittest.TestCase):
    def test_subtractive(self):
        self.assertEqual(to_roman(4), "IV")
        self.assertEqual(to_roman(9), "IX")
        self.assertEqual(to_roman(40), "XL")

    def test_large(self):
        self.assertEqual(to_roman(1994), "MCMXCIV")
        self.assertEqual(to_roman(3999), "MMMCMXCIX")

    def test_out_of_range(self):
        for n in (0, 4000, -1):
            with self.assertRaises(ValueError):
                to_roman(n)


if __name__ == "__main__":
    unittest.main()
