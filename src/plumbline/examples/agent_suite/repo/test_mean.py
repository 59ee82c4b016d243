import unittest

from mean import mean


class MeanTest(unittest.TestCase):
    def test_mean(self) -> None:
        self.assertEqual(mean([1.0, 2.0, 3.0]), 2.0)


if __name__ == "__main__":
    unittest.main()
