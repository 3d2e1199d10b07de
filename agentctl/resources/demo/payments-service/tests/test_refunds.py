import unittest

from payments.refunds import refund_amount, refund_mode


class RefundsTest(unittest.TestCase):
    def test_refund_subtracts_the_fee(self):
        self.assertEqual(refund_amount(1000, 30), 970)

    def test_refund_is_never_negative(self):
        self.assertEqual(refund_amount(10, 30), 0)

    def test_instant_refunds(self):
        self.assertEqual(refund_mode({"region": "eu"}), "instant")


if __name__ == "__main__":
    unittest.main()
