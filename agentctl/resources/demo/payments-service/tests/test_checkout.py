import unittest

from payments.checkout import checkout_path


class CheckoutTest(unittest.TestCase):
    def test_fast_checkout_is_enabled(self):
        self.assertEqual(checkout_path(1000, {"region": "eu"}), "fast")


if __name__ == "__main__":
    unittest.main()
