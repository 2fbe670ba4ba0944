"""A small runbook library as file texts: what the runbook tests read, through the real front-matter parser."""

from __future__ import annotations

ORDER_5XX = (
    "---\ntitle: Order service 5xx\nservices: [order-service]\nalerts: [OrderService5xxHigh]\n"
    "when_to_use: order-service answers 5xx\n---\nBODY-SECRET-STEPS: open https://grafana.example/d/orders\n"
)
TEXTS = {
    "orders/5xx.md": ORDER_5XX,
    "checkout.md": "---\ntitle: Checkout\nservices: [checkout]\n---\nbody\n",
    "checkout-db.md": "---\ntitle: Checkout DB\nservices: [checkout-db]\n---\nbody\n",
    "gateway.md": "---\ntitle: Gateway\nservices: [gateway]\nalerts: [GatewayDown]\n---\nbody\n",
}
