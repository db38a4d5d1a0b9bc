import unittest

from roman import to_roman


class RomanTest(unittest.TestCase):
    def test_small(self):
        self.assertEqual(to_roman(3), "III")


if __name__ == "__main__":
    unittest.main()
