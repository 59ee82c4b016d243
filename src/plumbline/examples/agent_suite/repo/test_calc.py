import unittest

from calc import add, multiply


class CalcTest(unittest.TestCase):
    def test_add(self) -> None:
        self.assertEqual(add(2, 3), 5)

    def test_multiply(self) -> None:
        self.assertEqual(multiply(2, 3), 6)


if __name__ == "__main__":
    unittest.main()
